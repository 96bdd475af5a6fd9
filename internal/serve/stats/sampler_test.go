package stats

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)

func TestNanoCores(t *testing.T) {
	prev := map[string]point{
		"a":       {at: epoch, ns: 1_000_000_000},
		"restart": {at: epoch, ns: 5_000_000_000},
		"gone":    {at: epoch, ns: 1},
	}
	now := epoch.Add(10 * time.Second)
	rates, next := nanoCores(prev, map[string]uint64{"a": 6_000_000_000, "restart": 100, "new": 7}, now)
	if diff := cmp.Diff(map[string]uint64{"a": 500_000_000}, rates); diff != "" {
		t.Errorf("rates (-want +got):\n%s", diff)
	}
	want := map[string]point{"a": {now, 6_000_000_000}, "restart": {now, 100}, "new": {now, 7}}
	if diff := cmp.Diff(want, next, cmp.AllowUnexported(point{})); diff != "" {
		t.Errorf("next (-want +got):\n%s", diff)
	}
}

func TestSamplerStep(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	usage := uint64(0)
	s := &sampler{clock: clk, period: DefaultSamplePeriod, read: func(context.Context) map[string]uint64 {
		return map[string]uint64{nodeKey: usage}
	}}
	if s.Rates() != nil {
		t.Error("rates before any sample")
	}
	s.step(context.Background())
	clk.Step(DefaultSamplePeriod)
	usage = 20_000_000_000 // two cores busy for 10 s
	s.step(context.Background())
	if got := s.Rates()[nodeKey]; got != 2_000_000_000 {
		t.Errorf("node rate = %d, want 2e9", got)
	}
}
