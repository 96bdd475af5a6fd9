package cgroupmath

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestCPUNumbersMatchUpstream pins the CPU numbers berth copies from
// upstream's pkg/kubelet/cm: shares, the quota period and the floors.
func TestCPUNumbersMatchUpstream(t *testing.T) {
	const cm = "k8s.io/kubernetes/pkg/kubelet/cm"
	src := upstreamsrc.New(t)
	for _, tt := range []struct {
		berth int64
		name  string
	}{
		{MinShares, "MinShares"},
		{MaxShares, "MaxShares"},
		{sharesPerCPU, "SharesPerCPU"},
		{milliCPUToCPU, "MilliCPUToCPU"},
		{QuotaPeriod, "QuotaPeriod"},
		{minQuota, "MinQuotaPeriod"},
		{MinMilliCPULimit, "MinMilliCPULimit"},
	} {
		if up := src.Value(cm, tt.name).AsInt(); up != tt.berth {
			t.Errorf("berth %d, upstream %s.%s %d", tt.berth, cm, tt.name, up)
		}
	}
}
