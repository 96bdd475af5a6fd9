package podstatus

import (
	"testing"

	"github.com/berthk8s/berth/internal/upstreamsrc"
)

// TestReasonsMatchUpstream pins the condition reasons to upstream's
// pkg/kubelet/status.
func TestReasonsMatchUpstream(t *testing.T) {
	const status = "k8s.io/kubernetes/pkg/kubelet/status"
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, name string }{
		{ReasonPodCompleted, "PodCompleted"},
		{ReasonPodFailed, "PodFailed"},
		{ReasonContainersNotReady, "ContainersNotReady"},
		{ReasonContainersNotInitialized, "ContainersNotInitialized"},
		{ReasonReadinessGatesNotReady, "ReadinessGatesNotReady"},
	} {
		if up := src.Value(status, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, status, tt.name, up)
		}
	}
}
