package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestProcPathsMatchUpstream pins the masked and read-only paths to
// upstream's securitycontext. Upstream appends the per-CPU thermal_throttle
// directories to the fixed masked list; where they are looked for is
// pinned by the machine package's TestThermalThrottleMatchesUpstream.
func TestProcPathsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/securitycontext"
	src := upstreamsrc.New(t)
	lists := src.Value(pkg, "defaultMaskedPaths").CompositeLits()
	if len(lists) != 1 {
		t.Fatalf("upstream %s defaultMaskedPaths has %d list literals, want 1: update berth", pkg, len(lists))
	}
	for _, tt := range []struct {
		name           string
		upstream, want []string
	}{
		{"masked", lists[0].AsStrings(), fixedMaskedPaths},
		{"read-only", src.Value(pkg, "defaultReadonlyPaths").AsStrings(), defaultReadonlyPaths},
	} {
		if diff := cmp.Diff(tt.upstream, tt.want); diff != "" {
			t.Errorf("%s paths differ from upstream's %s (-upstream +berth):\n%s", tt.name, pkg, diff)
		}
	}
}

// TestNumbersMatchUpstream pins the numbers berth copies from upstream:
// OOM score adjustments and the node-critical class (cgroupmath pins the
// CPU shares and quota).
func TestNumbersMatchUpstream(t *testing.T) {
	const (
		qos   = "k8s.io/kubernetes/pkg/kubelet/qos"
		sched = "k8s.io/kubernetes/pkg/apis/scheduling"
	)
	tests := []struct {
		berth     int64
		pkg, name string
	}{
		{guaranteedOOMScoreAdj, qos, "guaranteedOOMScoreAdj"},
		{besteffortOOMScoreAdj, qos, "besteffortOOMScoreAdj"},
	}
	src := upstreamsrc.New(t)
	for _, tt := range tests {
		if up := src.Value(tt.pkg, tt.name).AsInt(); up != tt.berth {
			t.Errorf("berth %d, upstream %s.%s %d", tt.berth, tt.pkg, tt.name, up)
		}
	}
	if up := src.Value(sched, "SystemNodeCritical").AsString(); up != systemNodeCritical {
		t.Errorf("berth %q, upstream %s.SystemNodeCritical %q", systemNodeCritical, sched, up)
	}
}
