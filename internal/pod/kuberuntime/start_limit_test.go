package kuberuntime

import (
	"testing"
	"time"
)

// limitPhase is a run of latency samples fed to a startLimit, one every
// `every`, and what the limit does over it.
type limitPhase struct {
	n     int
	every time.Duration
	kind  func(i int) startKind     // nil: sandbox
	took  func(i int) time.Duration // the i-th sample's latency
	idle  bool                      // nothing holds a slot (else all slots are held)
	trend int                       // +1 never falls, -1 never rises, 0 never moves
	want  int                       // slots at the end of the phase
}

func steady(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

// rising is d growing by a tenth each sample.
func rising(d time.Duration) func(int) time.Duration {
	return func(i int) time.Duration {
		for range i {
			d += d / 10
		}
		return d
	}
}

// TestStartLimit: the limit grows while latency holds, shrinks as it
// climbs, never leaves [floor, ceiling], grows only in use, keeps one
// baseline a kind and takes a new one after baselineWindow.
func TestStartLimit(t *testing.T) {
	limits := StartLimits{Floor: 2, Initial: 4, Ceiling: 16}
	alternate := func(i int) startKind { return startKind(i % 2) }
	for _, tc := range []struct {
		name   string
		phases []limitPhase
	}{
		{"grows to the ceiling while latency holds", []limitPhase{
			{n: 60, every: time.Second, took: steady(100 * time.Millisecond), trend: +1, want: 16},
		}},
		{"does not grow when not in use", []limitPhase{
			{n: 60, every: time.Second, took: steady(100 * time.Millisecond), idle: true, trend: 0, want: 4},
		}},
		{"shrinks to the floor as latency climbs", []limitPhase{
			{n: 60, every: time.Second, took: steady(100 * time.Millisecond), trend: +1, want: 16},
			{n: 60, every: time.Second, took: rising(100 * time.Millisecond), trend: -1, want: 2},
		}},
		{"latency within the tolerance holds", []limitPhase{
			{n: 10, every: time.Second, took: steady(100 * time.Millisecond), trend: +1, want: 8},
			{n: 60, every: time.Second, took: steady(140 * time.Millisecond), trend: +1, want: 16},
		}},
		{"shrinks while not in use", []limitPhase{
			{n: 60, every: time.Second, took: steady(100 * time.Millisecond), trend: +1, want: 16},
			{n: 60, every: time.Second, took: steady(time.Second), idle: true, trend: -1, want: 2},
		}},
		{"sandboxes and containers have their own baselines", []limitPhase{
			{n: 60, every: time.Second, kind: alternate, trend: +1, want: 16, took: func(i int) time.Duration {
				return []time.Duration{400 * time.Millisecond, 50 * time.Millisecond}[i%2]
			}},
		}},
		{"a slower runtime is the new baseline after the window", []limitPhase{
			{n: 60, every: time.Second, took: steady(100 * time.Millisecond), trend: +1, want: 16},
			{n: 30, every: time.Second, took: steady(300 * time.Millisecond), trend: -1, want: 2},
			{n: 60, every: 10 * time.Second, took: steady(300 * time.Millisecond), trend: +1, want: 16},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newStartLimit(limits)
			now := time.Unix(0, 0)
			for p, ph := range tc.phases {
				for i := range ph.n {
					now = now.Add(ph.every)
					kind := startSandbox
					if ph.kind != nil {
						kind = ph.kind(i)
					}
					running := l.slots()
					if ph.idle {
						running = 0
					}
					was := l.slots()
					l.observe(kind, ph.took(i), running, now)
					got := l.slots()
					if got < limits.Floor || got > limits.Ceiling {
						t.Fatalf("phase %d sample %d: limit %d outside [%d, %d]", p, i, got, limits.Floor, limits.Ceiling)
					}
					if (ph.trend >= 0 && got < was) || (ph.trend <= 0 && got > was) {
						t.Fatalf("phase %d sample %d (%v): limit went from %d to %d, want trend %+d", p, i, ph.took(i), was, got, ph.trend)
					}
				}
				if got := l.slots(); got != ph.want {
					t.Errorf("phase %d: limit %d at its end, want %d", p, got, ph.want)
				}
			}
		})
	}
}

// TestStartLimitIgnoresNonsense: a latency of 0 or less, or of no kind,
// moves nothing.
func TestStartLimitIgnoresNonsense(t *testing.T) {
	l := newStartLimit(StartLimits{Floor: 1, Initial: 3, Ceiling: 9})
	now := time.Unix(0, 0)
	for _, s := range []struct {
		kind startKind
		took time.Duration
	}{{startSandbox, 0}, {startContainer, -time.Second}, {startKinds, time.Second}, {-1, time.Second}} {
		l.observe(s.kind, s.took, 3, now)
	}
	if l.slots() != 3 || l.baseline(startSandbox) != 0 || l.baseline(startContainer) != 0 {
		t.Errorf("limit %d, baselines %v and %v after ignored samples, want 3, 0, 0",
			l.slots(), l.baseline(startSandbox), l.baseline(startContainer))
	}
}

// TestStartLimitsValidate: zero is no pacing; otherwise 1 <= Floor <=
// Initial <= Ceiling. PodStartLimits are valid for any CPU count.
func TestStartLimitsValidate(t *testing.T) {
	for _, tc := range []struct {
		l  StartLimits
		ok bool
	}{
		{StartLimits{}, true},
		{StartLimits{1, 1, 1}, true},
		{StartLimits{2, 4, 16}, true},
		{StartLimits{0, 1, 1}, false},
		{StartLimits{2, 1, 4}, false},
		{StartLimits{1, 4, 2}, false},
		{PodStartLimits(0), true},
		{PodStartLimits(2), true},
	} {
		if err := tc.l.validate(); (err == nil) != tc.ok {
			t.Errorf("%+v.validate() = %v, want ok %v", tc.l, err, tc.ok)
		}
	}
	if got, want := PodStartLimits(2), (StartLimits{Floor: 2, Initial: 4, Ceiling: 16}); got != want {
		t.Errorf("PodStartLimits(2) = %+v, want %+v", got, want)
	}
}
