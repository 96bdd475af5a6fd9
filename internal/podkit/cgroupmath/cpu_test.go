package cgroupmath

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMilliCPUToShares(t *testing.T) {
	tests := []struct{ milli, want int64 }{
		{0, 2}, {1, 2}, {2, 2}, {10, 10}, {100, 102}, {250, 256}, {1000, 1024},
		{1500, 1536}, {300000, 262144},
	}
	for _, tt := range tests {
		if got := MilliCPUToShares(tt.milli); got != tt.want {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
}

func TestMilliCPUToQuota(t *testing.T) {
	tests := []struct{ milli, want int64 }{
		{0, 0}, {5, 1000}, {9, 1000}, {10, 1000}, {200, 20000}, {500, 50000}, {1000, 100000}, {1500, 150000},
	}
	for _, tt := range tests {
		if got := MilliCPUToQuota(tt.milli, QuotaPeriod); got != tt.want {
			t.Errorf("MilliCPUToQuota(%d) = %d, want %d", tt.milli, got, tt.want)
		}
	}
}

// TestSharesToMilliCPU: upstream's table (kuberuntime helpers_linux_test
// TestSharesToMilliCPU): every request from 2m to 2000m survives the
// round trip through shares; 0m and 1m come back as 2m.
func TestSharesToMilliCPU(t *testing.T) {
	for milli := int64(0); milli <= 2000; milli++ {
		want := max(milli, 2)
		if got := SharesToMilliCPU(MilliCPUToShares(milli)); got != want {
			t.Errorf("SharesToMilliCPU(MilliCPUToShares(%d)) = %d, want %d", milli, got, want)
		}
	}
	for _, tt := range []struct{ shares, want int64 }{
		{0, 0}, {1, 0}, {2, 2}, {20, 20}, {21, 21}, {102, 100}, {1024, 1000}, {262144, 256000},
	} {
		if got := SharesToMilliCPU(tt.shares); got != tt.want {
			t.Errorf("SharesToMilliCPU(%d) = %d, want %d", tt.shares, got, tt.want)
		}
	}
}

// TestQuotaToMilliCPU: upstream's table (kuberuntime helpers_linux_test
// TestQuotaToMilliCPU), the unlimited quota and another period.
func TestQuotaToMilliCPU(t *testing.T) {
	for _, tt := range []struct{ quota, period, want int64 }{
		{5000, 100000, 50}, {75000, 100000, 750}, {100000, 100000, 1000}, {150000, 100000, 1500},
		{-1, 100000, 0}, {1000, 100000, 10}, {25000, 50000, 500},
	} {
		if got := QuotaToMilliCPU(tt.quota, tt.period); got != tt.want {
			t.Errorf("QuotaToMilliCPU(%d, %d) = %d, want %d", tt.quota, tt.period, got, tt.want)
		}
	}
}

func TestCFSQuota(t *testing.T) {
	type out struct {
		Quota, Period int64
		Enforced      bool
	}
	tests := []struct {
		name  string
		cfs   CFS
		milli int64
		want  out
	}{
		{"zero value: 100ms", CFS{}, 500, out{50000, 100000, true}},
		{"no limit: unlimited", CFS{Period: 50000}, 0, out{0, 50000, true}},
		{"1ms period: at least 1ms quota", CFS{Period: 1000}, 100, out{1000, 1000, true}},
		{"unenforced", CFS{Unenforced: true, Period: 200000}, 500, out{0, 200000, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got out
			got.Quota, got.Period, got.Enforced = tt.cfs.Quota(tt.milli)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Quota(%d) (-want +got):\n%s", tt.milli, diff)
			}
		})
	}
}
