package cpumanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamCPUManager = "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"

// TestOptionMaturityIsUpstreams pins optionMaturity to upstream's
// alphaOptions, betaOptions and stableOptions (policy_options.go).
func TestOptionMaturityIsUpstreams(t *testing.T) {
	want := upstreamsrc.New(t).OptionLevels(upstreamCPUManager)
	if d := cmp.Diff(want, optionMaturity); d != "" {
		t.Errorf("optionMaturity differs from upstream (-upstream +berth):\n%s", d)
	}
}

// TestReasonsAreUpstreams pins the admission reasons.
func TestReasonsAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value(upstreamCPUManager, "ErrorSMTAlignment").AsString(); got != ReasonSMTAlignment {
		t.Errorf("ReasonSMTAlignment = %q, upstream %q", ReasonSMTAlignment, got)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/cm/admission", "ErrorReasonUnexpected").AsString(); got != ReasonUnexpected {
		t.Errorf("ReasonUnexpected = %q, upstream %q", ReasonUnexpected, got)
	}
	for name, ours := range map[string]string{
		"FullPCPUsOnlyOption": FullPCPUsOnlyOption, "DistributeCPUsAcrossNUMAOption": DistributeCPUsAcrossNUMAOption,
		"AlignBySocketOption": AlignBySocketOption, "DistributeCPUsAcrossCoresOption": DistributeCPUsAcrossCoresOption,
		"StrictCPUReservationOption": StrictCPUReservationOption, "PreferAlignByUnCoreCacheOption": PreferAlignByUnCoreCacheOption,
	} {
		if got := src.Value(upstreamCPUManager, name).AsString(); got != ours {
			t.Errorf("%s = %q, upstream %q", name, ours, got)
		}
	}
}
