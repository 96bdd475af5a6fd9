package devicemanager

import (
	"slices"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamDeviceManager = "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"

// TestMessagesAreUpstreams pins the error texts of messages.go to the
// string literals of upstream's functions that write them.
func TestMessagesAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	plugin := upstreamDeviceManager + "/plugin/v1beta1"
	for name, ours := range map[string]string{
		"errUnsupportedVersion": msgUnsupportedVersion, "errInvalidResourceName": msgInvalidResourceName,
	} {
		if got := src.Value(plugin, name).AsString(); got != ours {
			t.Errorf("%s = %q, upstream %q", name, ours, got)
		}
	}
	if got := src.Value(upstreamDeviceManager, "errEndpointStopped").AsString(); got != msgEndpointStopped {
		t.Errorf("msgEndpointStopped = %q, upstream %q", msgEndpointStopped, got)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/cm/admission", "ErrorReasonUnexpected").AsString(); got != ReasonUnexpected {
		t.Errorf("ReasonUnexpected = %q, upstream %q", ReasonUnexpected, got)
	}
	for fn, msgs := range map[string][]string{
		"PluginConnected":                       {msgAlreadyConnected, msgOptionsFailed},
		"devicesToAllocate":                     {msgChangedRequest, msgUnregistered, msgNoHealthy, msgNoLongerHealthy, msgUnavailable, msgLessThanRequired},
		"allocateContainerResources":            {msgUnknownPlugin, msgNoContainers},
		"callPreStartContainerIfNeeded":         {msgNoEndpoint, msgNoDevicesCached, msgPreStartFailed},
		"callGetPreferredAllocationIfAvailable": {msgNoEndpoint, msgPreferredFailed},
	} {
		lits := src.Func(upstreamDeviceManager, fn).StringLiterals()
		for _, m := range msgs {
			if !slices.Contains(lits, m) {
				t.Errorf("upstream's %s has no literal %q (its literals: %q)", fn, m, lits)
			}
		}
	}
	lits := src.Func("k8s.io/kubernetes/pkg/kubelet/cm/admission", "Error").StringLiterals()
	if !slices.Contains(lits, msgUnexpected) {
		t.Errorf("upstream's admission error has no literal %q (its literals: %q)", msgUnexpected, lits)
	}
}

// TestConstantsAreUpstreams pins the grace period and the file names.
func TestConstantsAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value(upstreamDeviceManager, "endpointStopGracePeriod").AsDuration(); got != endpointStopGracePeriod {
		t.Errorf("endpointStopGracePeriod = %v, upstream %v", endpointStopGracePeriod, got)
	}
	if got := src.Value(upstreamDeviceManager, "kubeletDeviceManagerCheckpoint").AsString(); got != "kubelet_internal_checkpoint" {
		t.Errorf("upstream's checkpoint is %q", got)
	}
}
