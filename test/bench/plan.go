package bench

import (
	"fmt"
	"slices"
)

// Load keys of the steady-state samples: no pods, the largest burst's
// pods, the density scenario's pods.
const (
	loadIdle  = "idle"
	loadBusy  = "busy"
	loadDense = "dense"
)

// burstStep is one burst of a kubelet's repeat: its pods, and the load key
// of the steady-state sample taken while they run ("" for none).
type burstStep struct {
	Pods   int
	Steady string
}

// planBursts is the bursts of repeat rep (from 1): every size of bursts,
// then the density scenario's when density > 0. The steady state is
// sampled in the first repeat only, after the largest of bursts (busy)
// and after the density burst (dense). It is pure.
func planBursts(bursts []int, density, rep int) []burstStep {
	var out []burstStep
	for _, b := range bursts {
		st := burstStep{Pods: b}
		if rep == 1 && b == maxBurst(bursts) {
			st.Steady = loadBusy
		}
		out = append(out, st)
	}
	if density > 0 {
		st := burstStep{Pods: density}
		if rep == 1 {
			st.Steady = loadDense
		}
		out = append(out, st)
	}
	return out
}

// allBursts is every burst size of the run, the density scenario's last.
func allBursts(bursts []int, density int) []int {
	out := slices.Clone(bursts)
	if density > 0 {
		out = append(out, density)
	}
	return out
}

// heapSteps is the pod counts at which berth's heap is profiled: 0, 10
// and 110 (upstream's default maxPods), and the density scenario's count,
// none above maxPods, in increasing order. It is pure.
func heapSteps(density, maxPods int) []int {
	var out []int
	for _, n := range []int{0, 10, upstreamMaxPods, density} {
		if n <= maxPods && !slices.Contains(out, n) && (n > 0 || len(out) == 0) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// validatePlan refuses burst sizes a kubelet with maxPods cannot run, and
// a density count that repeats a burst size (their figures share keys).
func validatePlan(bursts []int, density, maxPods int) error {
	if len(bursts) == 0 {
		return fmt.Errorf("no burst sizes")
	}
	for _, b := range bursts {
		if b <= 0 || b > maxPods {
			return fmt.Errorf("burst size %d: want 1 to %d (maxPods)", b, maxPods)
		}
	}
	if density < 0 || density > maxPods {
		return fmt.Errorf("density %d: want 0 (off) to %d (maxPods)", density, maxPods)
	}
	if density > 0 && slices.Contains(bursts, density) {
		return fmt.Errorf("density %d is also a burst size: their figures would mix", density)
	}
	return nil
}
