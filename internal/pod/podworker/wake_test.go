package podworker

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestWakeAtDeadline: a SyncPod result's WakeAt (the pod's active deadline)
// brings the next sync forward from the resync interval; a later update
// whose sync reports another WakeAt moves it, back to the resync interval
// when the new one is after it.
func TestWakeAtDeadline(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").wakeAt(epoch.Add(30 * time.Second))
	if at, want := h.requeuedAt("a"), epoch.Add(30*time.Second); !at.Equal(want) {
		t.Fatalf("requeued at %v, want %v (the deadline)", at, want)
	}

	// The deadline is lowered: the update's sync reports an earlier one.
	h.clock.Step(time.Second)
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2")})
	h.next("SyncPod", "a").wakeAt(epoch.Add(5 * time.Second))
	h.requeueBecomes("a", epoch.Add(5*time.Second)) // the lowered deadline
	h.clock.Step(3 * time.Second)
	h.w.SyncDue(h.ctx)
	h.clock.Step(time.Second)
	h.w.SyncDue(h.ctx)
	woken := h.next("SyncPod", "a")
	if woken.Type != SyncPodSync || woken.Version != "2" {
		t.Errorf("woken SyncPod(%v, version %q), want sync of version 2", woken.Type, woken.Version)
	}
	// Raised past the resync interval: the resync interval again.
	woken.wakeAt(epoch.Add(time.Hour))
	h.requeueBecomes("a", epoch.Add(5*time.Second+time.Minute)) // the resync interval
}

// requeueBecomes waits until uid's requeue time is want.
func (h *harness) requeueBecomes(uid types.UID, want time.Time) {
	h.t.Helper()
	h.eventually("requeue of "+string(uid)+" at "+want.String(), func() bool {
		h.w.retry.mu.Lock()
		defer h.w.retry.mu.Unlock()
		return h.w.retry.due[uid].Equal(want)
	})
}

func TestWakeBy(t *testing.T) {
	now := epoch
	tests := []struct {
		name   string
		delay  time.Duration
		wakeAt time.Time
		want   time.Duration
	}{
		{"no wake time", time.Minute, time.Time{}, time.Minute},
		{"no requeue stays none", 0, now.Add(time.Second), 0},
		{"earlier wake time wins", time.Minute, now.Add(5 * time.Second), 5 * time.Second},
		{"later wake time loses", time.Minute, now.Add(time.Hour), time.Minute},
		{"past wake time: at once", time.Minute, now.Add(-time.Second), time.Nanosecond},
		{"wake time now: at once", time.Minute, now, time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wakeBy(tt.delay, tt.wakeAt, now); got != tt.want {
				t.Errorf("wakeBy(%v, %v) = %v, want %v", tt.delay, tt.wakeAt, got, tt.want)
			}
		})
	}
}
