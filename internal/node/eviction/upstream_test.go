package eviction

import (
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamPkg = "k8s.io/kubernetes/pkg/kubelet/eviction"

// TestMessageFormatsMatchUpstream pins the reason, the message formats and
// the signals to upstream's source (podutil pins the critical priority).
func TestMessageFormatsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ pkg, name, berth string }{
		{upstreamPkg, "Reason", Reason},
		{upstreamPkg, "nodeLowMessageFmt", nodeLowMessageFmt},
		{upstreamPkg, "nodeConditionMessageFmt", nodeConditionMessageFmt},
		{upstreamPkg, "containerMessageFmt", containerMessageFmt},
		{upstreamPkg, "thresholdMetMessageFmt", thresholdMetMessageFmt},
		{upstreamPkg, "containerEphemeralStorageMessageFmt", containerEphemeralStorageMessageFmt},
		{upstreamPkg, "podEphemeralStorageMessageFmt", podEphemeralStorageMessageFmt},
		{upstreamPkg, "emptyDirMessageFmt", emptyDirMessageFmt},
		{upstreamPkg, "signalEmptyDirFsLimit", string(SignalEmptyDirFsLimit)},
		{upstreamPkg, "signalEphemeralPodFsLimit", string(SignalEphemeralPodFsLimit)},
		{upstreamPkg, "signalEphemeralContainerFsLimit", string(SignalEphemeralContainerFsLimit)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalMemoryAvailable", string(SignalMemoryAvailable)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalAllocatableMemoryAvailable", string(SignalAllocatableMemoryAvailable)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalNodeFsAvailable", string(SignalNodeFsAvailable)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalNodeFsInodesFree", string(SignalNodeFsInodesFree)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalImageFsAvailable", string(SignalImageFsAvailable)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalImageFsInodesFree", string(SignalImageFsInodesFree)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalContainerFsAvailable", string(SignalContainerFsAvailable)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalContainerFsInodesFree", string(SignalContainerFsInodesFree)},
		{"k8s.io/kubernetes/pkg/kubelet/eviction/api", "SignalPIDAvailable", string(SignalPIDAvailable)},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream %q", tt.name, tt.berth, up)
		}
	}
}

// TestCleanupWaitMatchesUpstream pins how long and how often Run waits for
// an evicted pod's cleanup to upstream's podCleanupTimeout and
// podCleanupPollFreq, and the monitoring period to evictionMonitoringPeriod.
func TestCleanupWaitMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tt := range []struct {
		pkg, name string
		berth     time.Duration
	}{
		{upstreamPkg, "podCleanupTimeout", podCleanupTimeout},
		{upstreamPkg, "podCleanupPollFreq", podCleanupPollFreq},
		{"k8s.io/kubernetes/pkg/kubelet", "evictionMonitoringPeriod", DefaultMonitoringPeriod},
	} {
		if up := src.Value(tt.pkg, tt.name).AsDuration(); up != tt.berth {
			t.Errorf("%s: berth %v, upstream %v", tt.name, tt.berth, up)
		}
	}
}
