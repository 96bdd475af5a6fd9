package podworker

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestShortBackoff(t *testing.T) {
	tests := []struct {
		n    int
		want time.Duration
	}{
		{n: 0, want: 200 * time.Millisecond},
		{n: 1, want: 400 * time.Millisecond},
		{n: 3, want: 1600 * time.Millisecond},
		{n: 5, want: 6400 * time.Millisecond},
		{n: 6, want: 10 * time.Second},
		{n: 1000, want: 10 * time.Second},
	}
	for _, tt := range tests {
		if got := shortBackoff(tt.n, 10*time.Second); got != tt.want {
			t.Errorf("shortBackoff(%d, 10s) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

// A transient failure is retried after a short back-off that doubles
// while failures go on; a success resets it; any other failure waits the
// long back-off.
func TestTransientErrorRequeuesSoon(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	steps := []struct {
		name  string
		reply func(*fakeCall)
		after time.Duration
	}{
		{name: "first timeout", reply: func(c *fakeCall) { c.fail(errTransient) }, after: 200 * time.Millisecond},
		{name: "second timeout", reply: func(c *fakeCall) { c.fail(errTransient) }, after: 400 * time.Millisecond},
		{name: "success", reply: (*fakeCall).ok, after: time.Minute},
		{name: "timeout after a success", reply: func(c *fakeCall) { c.fail(errTransient) }, after: 200 * time.Millisecond},
		{name: "lasting failure", reply: func(c *fakeCall) { c.fail(errors.New("invalid image name")) }, after: 10 * time.Second},
		{name: "timeout after a lasting failure", reply: func(c *fakeCall) { c.fail(errTransient) }, after: 200 * time.Millisecond},
	}
	for i, s := range steps {
		now := h.clock.Now()
		s.reply(h.next("SyncPod", "a"))
		if at := h.requeuedAt("a"); !at.Equal(now.Add(s.after)) {
			t.Fatalf("%s: requeued %v after the call, want %v", s.name, at.Sub(now), s.after)
		}
		if i == len(steps)-1 {
			break
		}
		h.clock.Step(s.after)
		h.w.SyncDue(h.ctx)
	}
}

// A wait on the cluster is polled: the short back-off doubles up to
// WaitPoll and stays there while the wait lasts; a transient failure in
// between continues the doubling; a success or a lasting failure ends
// the poll.
func TestWaitIsPolled(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	wait := func(c *fakeCall) { c.fail(fmt.Errorf("set up volumes: %w", errWaiting)) }
	steps := []struct {
		name  string
		reply func(*fakeCall)
		after time.Duration
	}{
		{name: "claim pending", reply: wait, after: 200 * time.Millisecond},
		{name: "still pending", reply: wait, after: 400 * time.Millisecond},
		{name: "a timeout meanwhile", reply: func(c *fakeCall) { c.fail(errTransient) }, after: 800 * time.Millisecond},
		{name: "pending, fourth", reply: wait, after: 1600 * time.Millisecond},
		{name: "pending, fifth", reply: wait, after: WaitPoll},
		{name: "pending, sixth", reply: wait, after: WaitPoll},
		{name: "pending, seventh", reply: wait, after: WaitPoll},
		{name: "a lasting failure", reply: func(c *fakeCall) { c.fail(errors.New("invalid image name")) }, after: 10 * time.Second},
		{name: "pending again", reply: wait, after: 200 * time.Millisecond},
		{name: "bound", reply: (*fakeCall).ok, after: time.Minute},
	}
	for i, s := range steps {
		now := h.clock.Now()
		s.reply(h.next("SyncPod", "a"))
		if at := h.requeuedAt("a"); !at.Equal(now.Add(s.after)) {
			t.Fatalf("%s: requeued %v after the call, want %v", s.name, at.Sub(now), s.after)
		}
		if i == len(steps)-1 {
			break
		}
		h.clock.Step(s.after)
		h.w.SyncDue(h.ctx)
	}
}
