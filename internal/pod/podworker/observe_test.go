package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

func TestDurationLabel(t *testing.T) {
	tests := []struct {
		action Action
		typ    UpdateType
		want   string
	}{
		{CallSyncPod, SyncPodCreate, "create"},
		{CallSyncPod, SyncPodUpdate, "update"},
		{CallSyncPod, SyncPodSync, "sync"},
		{CallSyncTerminatingPod, SyncPodKill, "kill"},
		{CallSyncTerminatedPod, SyncPodKill, "terminated"},
	}
	for _, tt := range tests {
		if got := durationLabel(step{action: tt.action, opts: UpdateOptions{Type: tt.typ}}); got != tt.want {
			t.Errorf("durationLabel(%v, %v) = %q, want %q", tt.action, tt.typ, got, tt.want)
		}
	}
}

func TestObserveSyncSinceStartTime(t *testing.T) {
	type obs struct {
		Op string
		D  time.Duration
	}
	var got []obs
	clk := testingclock.NewFakeClock(epoch)
	w, err := New(Config{Syncer: newFakeSyncer(), Cache: &fakeCache{minTimes: map[types.UID][]time.Time{}}, Clock: clk,
		ObserveSync: func(op string, d time.Duration) { got = append(got, obs{op, d}) }})
	if err != nil {
		t.Fatal(err)
	}
	clk.Step(3 * time.Second)
	w.observe(step{action: CallSyncPod, opts: UpdateOptions{Type: SyncPodCreate, StartTime: epoch}})
	w.observe(step{action: CallSyncPod, opts: UpdateOptions{Type: SyncPodSync}}) // no StartTime: not observed
	w.observe(step{action: CallSyncTerminatedPod, opts: UpdateOptions{Type: SyncPodKill, StartTime: epoch.Add(time.Second)}})
	want := []obs{{"create", 3 * time.Second}, {"terminated", 2 * time.Second}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

// TestObserveStartOnCreate: only the SyncPod of a create update with a
// StartTime reports the worker start.
func TestObserveStartOnCreate(t *testing.T) {
	type obs struct {
		UID       types.UID
		FirstSeen time.Time
		Now       time.Time
	}
	var got []obs
	clk := testingclock.NewFakeClock(epoch.Add(2 * time.Second))
	w, err := New(Config{Syncer: newFakeSyncer(), Cache: &fakeCache{minTimes: map[types.UID][]time.Time{}}, Clock: clk,
		ObserveStart: func(uid types.UID, firstSeen, now time.Time) { got = append(got, obs{uid, firstSeen, now}) }})
	if err != nil {
		t.Fatal(err)
	}
	w.observeStart("a", step{action: CallSyncPod, opts: UpdateOptions{Type: SyncPodCreate, StartTime: epoch}})
	w.observeStart("b", step{action: CallSyncPod, opts: UpdateOptions{Type: SyncPodCreate}})
	w.observeStart("c", step{action: CallSyncPod, opts: UpdateOptions{Type: SyncPodUpdate, StartTime: epoch}})
	w.observeStart("d", step{action: CallSyncTerminatingPod, opts: UpdateOptions{Type: SyncPodCreate, StartTime: epoch}})
	want := []obs{{"a", epoch, epoch.Add(2 * time.Second)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}
