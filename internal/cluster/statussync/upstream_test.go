package statussync

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestTerminationBudgetMatchesUpstream pins the termination message budget
// to upstream's.
func TestTerminationBudgetMatchesUpstream(t *testing.T) {
	const container = "k8s.io/kubernetes/pkg/kubelet/container"
	up := upstreamsrc.New(t).Value(container, "MaxPodTerminationMessageLogLength").AsInt()
	if up != maxTerminationMessages {
		t.Errorf("maxTerminationMessages %d, upstream %s.MaxPodTerminationMessageLogLength %d", maxTerminationMessages, container, up)
	}
}
