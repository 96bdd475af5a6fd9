package statussync

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// observedWrites collects what ObserveWrite reports, as (since, at)
// offsets from now and the written phase.
type observedWrites struct {
	mu  sync.Mutex // guards got
	got []writeSeen
}

type writeSeen struct {
	Since, At time.Duration
	Phase     corev1.PodPhase
}

func (o *observedWrites) observe(_ context.Context, w Written) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, writeSeen{Since: w.Since.Sub(now), At: w.At.Sub(now), Phase: w.Status.Phase})
}

func (o *observedWrites) take() []writeSeen {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.got
	o.got = nil
	return out
}

// TestObserveWriteLatency: a write reports the time since the oldest
// change it carries, through failed writes and later changes; a change
// undone before a pass writes nothing and starts no latency.
func TestObserveWriteLatency(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	obs := &observedWrites{}
	e.s.cfg.ObserveWrite = obs.observe
	e.failPatches(1, apierrors.NewServiceUnavailable("apiserver is restarting"))
	e.start()

	// Stored at now: the first patch fails, the probe RetryInterval later
	// succeeds and reports RetryInterval.
	e.store.Set("u1", running())
	e.waitPass(false)
	if got := obs.take(); len(got) != 0 {
		t.Fatalf("a failed write was observed: %+v", got)
	}
	e.clock.Step(RetryInterval)
	e.waitPass(false)
	want := []writeSeen{{Since: 0, At: RetryInterval, Phase: corev1.PodRunning}}
	if diff := cmp.Diff(want, obs.take()); diff != "" {
		t.Errorf("after the retry (-want +got):\n%s", diff)
	}

	// A new change 1 s later is written at once and reports from itself.
	e.clock.Step(time.Second)
	e.store.Set("u1", failed())
	e.waitPass(false)
	want = []writeSeen{{Since: RetryInterval + time.Second, At: RetryInterval + time.Second, Phase: corev1.PodFailed}}
	if diff := cmp.Diff(want, obs.take()); diff != "" {
		t.Errorf("after a second change (-want +got):\n%s", diff)
	}

	// The periodic pass with nothing new reports nothing.
	e.tick()
	if got := obs.take(); len(got) != 0 {
		t.Errorf("a pass without a change reported %+v", got)
	}
}
