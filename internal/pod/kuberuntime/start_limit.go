package kuberuntime

import (
	"math"
	"time"
)

// startLimit is the adaptive limit of the new pod starts that run at once
// (start_pace.go holds the slots): a gradient limiter in the style of
// Netflix's concurrency-limits (Gradient). Each observed latency of a
// RunPodSandbox or of a container's create and start is compared with the
// best latency of its kind seen recently, the baseline:
//
//	gradient = clamp(latencyTolerance * baseline / recent, minGradient, 1)
//	target   = limit + sqrt(limit)   while gradient is 1 (latency holds)
//	         = limit * gradient      once it is less (latency climbs)
//	limit    = limit + (target - limit) * limitSmoothing, within [floor, ceiling]
//
// where recent is the moving average of the kind's latest latencies. While
// latency holds within the tolerance the limit grows by the square root
// of itself (the queue Gradient allows); once latency climbs past the
// tolerance it shrinks in proportion, by a tenth at most a step. Unlike
// Gradient's, the queue is not added while latency climbs, so an
// overloaded runtime takes the limit down to the floor. The limit grows
// only while it is in use (at least half of it held when the latency is
// seen), so a quiet node does not raise it to the ceiling. The baseline
// is the least latency of the last baselineWindow (two half-windows), so
// a runtime that gets slower for good (a full node) sets a new one within
// that window.
//
// A startLimit is a value with no clock: the time of each observation is
// an argument, and nothing in it runs on its own. It is not safe for
// concurrent use; startPace's mutex guards it.
type startLimit struct {
	floor, ceiling, limit float64
	latency               [startKinds]latencyTrack
}

// startKind is what a latency sample timed: a sandbox or a container start.
// Their latencies differ several times over, so each has its baseline.
type startKind int

const (
	startSandbox   startKind = iota // RunPodSandbox
	startContainer                  // CreateContainer and StartContainer, the image pulled
	startKinds
)

func (k startKind) String() string {
	if k == startSandbox {
		return "sandbox"
	}
	return "container"
}

const (
	// latencyTolerance is how far latency may climb over the baseline
	// before the limit shrinks: Gradient2's default.
	latencyTolerance = 1.5
	// minGradient bounds one step's shrink: the target is half the limit
	// at least.
	minGradient = 0.5
	// limitSmoothing is how far one observation moves the limit toward
	// its target.
	limitSmoothing = 0.2
	// recentWeight is the weight of the latest latency in the moving
	// average the gradient compares with the baseline.
	recentWeight = 0.25
	// baselineWindow is how long the best latency stays the baseline:
	// longer than a burst of pods takes to start (seconds to a minute),
	// so that latencies climbing through a burst are measured against its
	// start, not against themselves.
	baselineWindow = 5 * time.Minute
)

// latencyTrack is one kind's latencies: their moving average and the best
// of the last baselineWindow.
type latencyTrack struct {
	recent time.Duration // 0: nothing seen yet
	best   windowMin
}

// windowMin is the least duration added over the last baselineWindow, to
// within half of it: the least of the current half-window and of the one
// before it.
type windowMin struct {
	cur, prev time.Duration // 0: none
	curSince  time.Time
}

func (w *windowMin) add(d time.Duration, now time.Time) {
	if age := now.Sub(w.curSince); w.cur == 0 || age >= baselineWindow/2 {
		w.prev = w.cur
		if w.cur == 0 || age >= baselineWindow {
			w.prev = 0
		}
		w.cur, w.curSince = d, now
		return
	}
	w.cur = min(w.cur, d)
}

func (w *windowMin) min() time.Duration {
	if w.prev != 0 && w.prev < w.cur {
		return w.prev
	}
	return w.cur
}

// newStartLimit returns the limit l describes, at its initial value.
// validate has checked l.
func newStartLimit(l StartLimits) startLimit {
	return startLimit{floor: float64(l.Floor), ceiling: float64(l.Ceiling), limit: float64(l.Initial)}
}

// slots is how many starts may run at once now.
func (l *startLimit) slots() int { return int(l.limit) }

// baseline is the kind's best recent latency (0: none seen).
func (l *startLimit) baseline(kind startKind) time.Duration { return l.latency[kind].best.min() }

// observe takes one latency of the kind, seen at now while running starts
// held a slot, and moves the limit.
func (l *startLimit) observe(kind startKind, took time.Duration, running int, now time.Time) {
	if took <= 0 || kind < 0 || kind >= startKinds {
		return
	}
	t := &l.latency[kind]
	t.best.add(took, now)
	if t.recent == 0 {
		t.recent = took
	} else {
		t.recent += time.Duration(float64(took-t.recent) * recentWeight)
	}
	gradient := latencyTolerance * float64(t.best.min()) / float64(t.recent)
	gradient = max(minGradient, min(1, gradient))
	target := l.limit * gradient
	if gradient >= 1 {
		target += math.Sqrt(l.limit)
		if float64(2*running) < l.limit {
			// Not in use: what the runtime could take is not measured.
			target = l.limit
		}
	}
	l.limit += (target - l.limit) * limitSmoothing
	l.limit = max(l.floor, min(l.ceiling, l.limit))
}
