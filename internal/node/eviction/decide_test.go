package eviction

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"
)

func obsMem(avail string, at time.Time) Observations {
	return Observations{SignalMemoryAvailable: {Available: *q(avail), Capacity: *q("8Gi"), Time: at}}
}

// TestDecideTimeline walks a fake clock through pressure and relief: a
// hard threshold acts at once, the condition holds for the transition
// period after the last observation, minimum reclaim keeps a threshold
// met, a soft threshold waits for its grace period, and stale stats do
// not act twice.
func TestDecideTimeline(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hard := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}, MinReclaim: &Value{Quantity: q("500Mi")}}
	soft := Threshold{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("2Gi")}, GracePeriod: 30 * time.Second}
	steps := []struct {
		name      string
		advance   time.Duration
		available string
		stale     bool
		wantConds []corev1.NodeConditionType
		wantAct   []Threshold
	}{
		{name: "plenty", available: "4Gi"},
		{name: "soft met, grace not passed", advance: 10 * time.Second, available: "1500Mi",
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
		{name: "soft met past grace", advance: 30 * time.Second, available: "1500Mi",
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, wantAct: []Threshold{soft}},
		{name: "hard met too", advance: 10 * time.Second, available: "900Mi",
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, wantAct: []Threshold{hard, soft}},
		{name: "stale stats do not act", advance: 10 * time.Second, available: "900Mi", stale: true,
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
		{name: "hard below threshold plus min reclaim stays met", advance: 10 * time.Second, available: "1200Mi",
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}, wantAct: []Threshold{soft, hard}},
		{name: "relieved, condition held for transition period", advance: 10 * time.Second, available: "4Gi",
			wantConds: []corev1.NodeConditionType{corev1.NodeMemoryPressure}},
		{name: "transition period over", advance: time.Minute, available: "4Gi"},
	}
	var st State
	var last time.Time
	for _, s := range steps {
		clk.Step(s.advance)
		at := clk.Now()
		if s.stale {
			at = last
		}
		last = at
		d := Decide(Input{Thresholds: []Threshold{hard, soft}, Observations: obsMem(s.available, at), Previous: st,
			TransitionPeriod: time.Minute, Now: clk.Now()})
		st = d.Next
		if diff := cmp.Diff(s.wantConds, d.Conditions); diff != "" {
			t.Errorf("%s: conditions (-want +got):\n%s", s.name, diff)
		}
		if diff := cmp.Diff(s.wantAct, d.Act, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s: act (-want +got):\n%s", s.name, diff)
		}
		if (d.Reclaim != nil) != (len(s.wantAct) > 0) || (d.Reclaim != nil && d.Resource != corev1.ResourceMemory) {
			t.Errorf("%s: reclaim %v %q", s.name, d.Reclaim, d.Resource)
		}
	}
}

// TestDecideMemoryFirst: memory is reclaimed before disk and PIDs.
func TestDecideMemoryFirst(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := []Threshold{
		{Signal: SignalNodeFsAvailable, Value: Value{Percentage: 0.5}},
		{Signal: SignalPIDAvailable, Value: Value{Quantity: q("1000")}},
		{Signal: SignalMemoryAvailable, Value: Value{Quantity: q("1Gi")}},
	}
	obs := Observations{
		SignalNodeFsAvailable: {Available: *q("1Gi"), Capacity: *q("10Gi"), Time: now},
		SignalPIDAvailable:    {Available: *q("10"), Capacity: *q("4096"), Time: now},
		SignalMemoryAvailable: {Available: *q("100Mi"), Capacity: *q("8Gi"), Time: now},
	}
	d := Decide(Input{Thresholds: ts, Observations: obs, TransitionPeriod: time.Minute, Now: now})
	if d.Reclaim == nil || d.Reclaim.Signal != SignalMemoryAvailable {
		t.Fatalf("reclaim = %v, want memory.available", d.Reclaim)
	}
	want := []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodeMemoryPressure, corev1.NodePIDPressure}
	if diff := cmp.Diff(want, d.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if p := PressureOf(d.Conditions); p != (Pressure{Memory: true, Disk: true, PID: true}) {
		t.Errorf("pressure = %+v", p)
	}
}
