package cgroupmath

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const mi = 1 << 20

// TestMemoryHighOf pins KEP-2570's formula with upstream's test numbers
// (TestGenerateContainerConfigWithMemoryQoSEnforced: 128Mi requested,
// 256Mi limit or 32Gi allocatable, factor 0.9, 4 KiB pages).
func TestMemoryHighOf(t *testing.T) {
	for _, tt := range []struct {
		request, limit int64
		factor         float64
		want           int64
	}{
		{128 * mi, 256 * mi, 0.9, 255012864},
		{128 * mi, 32 * 1024 * mi, 0.9, 30937186304},
		{0, 32 * 1024 * mi, 0.9, 30923763712},
		{128 * mi, 256 * mi, 0.5, 192 * mi},
		{128 * mi, 256 * mi, 1, 256 * mi},
		{100, 10000, 0.9, 8192},
	} {
		if got := MemoryHighOf(tt.request, tt.limit, tt.factor, 4096); got != tt.want {
			t.Errorf("MemoryHighOf(%d, %d, %v) = %d, want %d", tt.request, tt.limit, tt.factor, got, tt.want)
		}
	}
}

// TestMemoryNamesMatchUpstream pins the cgroup file names and swap
// behaviours to upstream's constants.
func TestMemoryNamesMatchUpstream(t *testing.T) {
	const (
		cm    = "k8s.io/kubernetes/pkg/kubelet/cm"
		types = "k8s.io/kubernetes/pkg/kubelet/types"
	)
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{MemoryMin, cm, "Cgroup2MemoryMin"},
		{MemoryLow, cm, "Cgroup2MemoryLow"},
		{MemoryHigh, cm, "Cgroup2MemoryHigh"},
		{SwapMax, cm, "Cgroup2MaxSwapFilename"},
		{NoSwap, types, "NoSwap"},
		{LimitedSwap, types, "LimitedSwap"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
}
