package eviction

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// State is what one pass remembers for the next: when each threshold was
// first met, when each condition was last observed, the thresholds that
// drove evictions (held until their minimum reclaim is met) and the last
// observations (to act only on fresh stats).
type State struct {
	FirstMet      map[string]time.Time
	ConditionSeen map[corev1.NodeConditionType]time.Time
	Met           []Threshold
	Last          Observations
}

// Input is everything Decide looks at.
type Input struct {
	Thresholds   []Threshold
	Observations Observations
	Previous     State
	// TransitionPeriod is evictionPressureTransitionPeriod: a condition
	// stays true this long after it was last observed.
	TransitionPeriod time.Duration
	Now              time.Time
}

// Decision is one pass's verdict.
type Decision struct {
	// Next is the state for the next pass.
	Next State
	// Conditions are the node conditions that are true, sorted.
	Conditions []corev1.NodeConditionType
	// Act are the thresholds met past their grace periods on fresh stats,
	// in eviction priority (memory first); Reclaim is the one to act on and
	// Resource the resource it reclaims. Reclaim is nil when nothing is to
	// be reclaimed.
	Act      []Threshold
	Reclaim  *Threshold
	Resource corev1.ResourceName
}

// Decide is upstream's synchronize up to the choice of what to reclaim:
// thresholds met now, plus those met before whose minimum reclaim is not
// yet reached; node conditions with the transition period's hysteresis;
// soft thresholds only once met for their grace period; and only
// thresholds whose stats changed since the last pass.
func Decide(in Input) Decision {
	met := ThresholdsMet(in.Thresholds, in.Observations, false)
	for _, t := range ThresholdsMet(in.Previous.Met, in.Observations, true) {
		if !slices.ContainsFunc(met, func(m Threshold) bool { return m.key() == t.key() }) {
			met = append(met, t)
		}
	}
	next := State{FirstMet: map[string]time.Time{}, ConditionSeen: map[corev1.NodeConditionType]time.Time{}, Last: in.Observations}
	var graced []Threshold
	for _, t := range met {
		at, ok := in.Previous.FirstMet[t.key()]
		if !ok {
			at = in.Now
		}
		next.FirstMet[t.key()] = at
		if in.Now.Sub(at) >= t.GracePeriod {
			graced = append(graced, t)
		}
	}
	for c, at := range in.Previous.ConditionSeen {
		next.ConditionSeen[c] = at
	}
	for _, t := range met {
		next.ConditionSeen[signals[t.Signal].condition] = in.Now
	}
	d := Decision{Next: next}
	for c, at := range next.ConditionSeen {
		if in.Now.Sub(at) < in.TransitionPeriod {
			d.Conditions = append(d.Conditions, c)
		}
	}
	slices.Sort(d.Conditions)
	d.Next.Met = graced
	for _, t := range graced {
		last, seen := in.Previous.Last[t.Signal]
		obs := in.Observations[t.Signal]
		if !seen || obs.Time.IsZero() || obs.Time.After(last.Time) {
			d.Act = append(d.Act, t)
		}
	}
	slices.SortStableFunc(d.Act, func(a, b Threshold) int { return memoryFirst(a) - memoryFirst(b) })
	if len(d.Act) > 0 {
		d.Reclaim = &d.Act[0]
		d.Resource = signals[d.Act[0].Signal].resource
	}
	return d
}

// memoryFirst ranks memory signals before the others (upstream's
// byEvictionPriority).
func memoryFirst(t Threshold) int {
	if t.Signal == SignalMemoryAvailable || t.Signal == SignalAllocatableMemoryAvailable {
		return 0
	}
	return 1
}

// ThresholdsMet returns the thresholds whose signal's available amount is
// below the threshold, ignoring grace periods (upstream's thresholdsMet).
// With minReclaim the bar is raised by the threshold's minimum reclaim: a
// threshold stays met until that much more is available.
func ThresholdsMet(ts []Threshold, obs Observations, minReclaim bool) []Threshold {
	var out []Threshold
	for _, t := range ts {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		q := t.Value.Of(o.Capacity)
		if minReclaim && t.MinReclaim != nil {
			q.Add(t.MinReclaim.Of(o.Capacity))
		}
		if q.Cmp(o.Available) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// Pressure is the node conditions' verdicts, as nodestatus reports them.
type Pressure struct {
	Memory, Disk, PID bool
}

// PressureOf reads the verdicts out of a list of conditions.
func PressureOf(conds []corev1.NodeConditionType) Pressure {
	return Pressure{
		Memory: slices.Contains(conds, corev1.NodeMemoryPressure),
		Disk:   slices.Contains(conds, corev1.NodeDiskPressure),
		PID:    slices.Contains(conds, corev1.NodePIDPressure),
	}
}
