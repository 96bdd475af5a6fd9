package pluginmanager

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestQueueBacksOffExponentially: each failure of a socket's operation
// doubles its back-off, from 500 ms to at most 2 min 2 s; the socket is
// not ready before it has passed, nor while an operation is in flight; a
// success resets it.
func TestQueueBacksOffExponentially(t *testing.T) {
	now := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
	q := newQueue()
	const s = "/r/a.sock"
	var delays []time.Duration
	for range 10 {
		if !q.ready(s, now) {
			t.Fatalf("not ready at %v", now)
		}
		q.start(s)
		if q.ready(s, now) {
			t.Fatal("ready while in flight")
		}
		d := q.done(s, true, now)
		delays = append(delays, d)
		if q.ready(s, now.Add(d-time.Nanosecond)) {
			t.Fatalf("ready before the back-off of %v has passed", d)
		}
		if next, ok := q.nextRetry(now); !ok || !next.Equal(now.Add(d)) {
			t.Fatalf("nextRetry = %v, %v; want %v", next, ok, now.Add(d))
		}
		now = now.Add(d)
	}
	ms := time.Millisecond
	want := []time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 122 * time.Second, 122 * time.Second}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("back-off delays (-want +got):\n%s", diff)
	}
	q.start(s)
	if d := q.done(s, false, now); d != 0 || !q.ready(s, now) {
		t.Errorf("after a success: delay %v, ready %v; want 0, ready", d, q.ready(s, now))
	}
	q.start(s)
	if d := q.done(s, true, now); d != initialRetryDelay {
		t.Errorf("first failure after a success backs off %v, want %v", d, initialRetryDelay)
	}
}

// TestQueuePrune: a socket with nothing left to do forgets its back-off;
// one still planned, or in flight, keeps it.
func TestQueuePrune(t *testing.T) {
	now := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
	q := newQueue()
	for _, s := range []string{"gone", "planned", "busy"} {
		q.start(s)
		q.done(s, true, now)
	}
	q.start("busy")
	q.prune(map[string]bool{"planned": true})
	if !q.ready("gone", now) {
		t.Error("gone still backing off after prune")
	}
	if q.ready("planned", now) {
		t.Error("planned lost its back-off")
	}
	if q.failed["busy"] == nil {
		t.Error("busy lost its back-off while in flight")
	}
	if _, ok := q.nextRetry(now); !ok {
		t.Error("no retry left for planned")
	}
}
