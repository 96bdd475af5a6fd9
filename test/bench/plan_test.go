package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanBursts(t *testing.T) {
	tests := []struct {
		name    string
		bursts  []int
		density int
		rep     int
		want    []burstStep
	}{
		{name: "first repeat: steady after the largest burst and the density burst", bursts: []int{30, 100}, density: 250, rep: 1,
			want: []burstStep{{Pods: 30}, {Pods: 100, Steady: loadBusy}, {Pods: 250, Steady: loadDense}}},
		{name: "later repeats: no steady state", bursts: []int{30, 100}, density: 250, rep: 2,
			want: []burstStep{{Pods: 30}, {Pods: 100}, {Pods: 250}}},
		{name: "density off", bursts: []int{30, 100}, rep: 1,
			want: []burstStep{{Pods: 30}, {Pods: 100, Steady: loadBusy}}},
		{name: "largest burst first", bursts: []int{100, 30}, density: 250, rep: 1,
			want: []burstStep{{Pods: 100, Steady: loadBusy}, {Pods: 30}, {Pods: 250, Steady: loadDense}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, planBursts(tt.bursts, tt.density, tt.rep)); diff != "" {
				t.Errorf("planBursts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeapSteps(t *testing.T) {
	tests := []struct {
		name             string
		density, maxPods int
		want             []int
	}{
		{name: "density 250", density: 250, maxPods: 250, want: []int{0, 10, 110, 250}},
		{name: "density off", maxPods: 250, want: []int{0, 10, 110}},
		{name: "density below 110", density: 50, maxPods: 250, want: []int{0, 10, 50, 110}},
		{name: "density 110: once", density: 110, maxPods: 110, want: []int{0, 10, 110}},
		{name: "none above maxPods", maxPods: 100, want: []int{0, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, heapSteps(tt.density, tt.maxPods)); diff != "" {
				t.Errorf("heapSteps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatePlan(t *testing.T) {
	tests := []struct {
		name             string
		bursts           []int
		density, maxPods int
		ok               bool
	}{
		{name: "make bench's", bursts: []int{30, 100}, density: 250, maxPods: 250, ok: true},
		{name: "density off", bursts: []int{30, 100}, maxPods: 110, ok: true},
		{name: "burst above maxPods", bursts: []int{30, 120}, maxPods: 110},
		{name: "density above maxPods", bursts: []int{30}, density: 250, maxPods: 110},
		{name: "density repeats a burst", bursts: []int{30, 100}, density: 100, maxPods: 250},
		{name: "no bursts", maxPods: 250},
		{name: "negative density", bursts: []int{30}, density: -1, maxPods: 250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := validatePlan(tt.bursts, tt.density, tt.maxPods); (err == nil) != tt.ok {
				t.Errorf("validatePlan = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestMeasuresDensity(t *testing.T) {
	keys := map[string]bool{}
	for _, m := range Measures([]int{30, 100}, 250) {
		if keys[m.Key] {
			t.Errorf("measure %q twice", m.Key)
		}
		keys[m.Key] = true
	}
	for _, k := range []string{"burst250_pod", "burst250_added_p99", "dense_rss", "dense_cpu_spm", "api_rpm", "api_rpm_dense", "heap_inuse_0", "heap_inuse_250"} {
		if !keys[k] {
			t.Errorf("no measure %q", k)
		}
	}
	for _, m := range Measures([]int{30, 100}, 0) {
		if m.Key == "dense_rss" || m.Key == "burst250_pod" || m.Key == "heap_inuse_250" {
			t.Errorf("density off, but measure %q", m.Key)
		}
	}
}
