package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamTopologyManager = "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

// TestOptionMaturityIsUpstreams pins optionMaturity to upstream's
// alphaOptions, betaOptions and stableOptions (policy_options.go).
func TestOptionMaturityIsUpstreams(t *testing.T) {
	want := upstreamsrc.New(t).OptionLevels(upstreamTopologyManager)
	if d := cmp.Diff(want, optionMaturity); d != "" {
		t.Errorf("optionMaturity differs from upstream (-upstream +berth):\n%s", d)
	}
}

// TestNamesAreUpstreams pins the policy, scope and option names, the
// default NUMA node limit and the admission reason.
func TestNamesAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	for name, ours := range map[string]string{
		"PolicyNone": PolicyNone, "PolicyBestEffort": PolicyBestEffort, "PolicyRestricted": PolicyRestricted,
		"PolicySingleNumaNode": PolicySingleNUMANode, "ContainerTopologyScope": ScopeContainer, "PodTopologyScope": ScopePod,
		"PreferClosestNUMANodes": PreferClosestNUMANodesOption, "MaxAllowableNUMANodes": MaxAllowableNUMANodesOption,
		"ErrorTopologyAffinity": ReasonTopologyAffinity,
	} {
		if got := src.Value(upstreamTopologyManager, name).AsString(); got != ours {
			t.Errorf("%s = %q, upstream %q", name, ours, got)
		}
	}
	if got := src.Value(upstreamTopologyManager, "defaultMaxAllowableNUMANodes").AsInt(); got != DefaultMaxAllowableNUMANodes {
		t.Errorf("DefaultMaxAllowableNUMANodes = %d, upstream %d", DefaultMaxAllowableNUMANodes, got)
	}
}
