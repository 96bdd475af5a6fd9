package podworker

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestCoalesce(t *testing.T) {
	p1, p2 := newPod("a", "1"), newPod("a", "2")
	rt := &runtimestate.Pod{UID: "a"}
	t1, t2 := epoch, epoch.Add(time.Second)
	tests := []struct {
		name    string
		pending *UpdateOptions
		next    UpdateOptions
		want    UpdateOptions
	}{
		{"nothing pending", nil,
			UpdateOptions{Type: SyncPodUpdate, Pod: p1, StartTime: t1},
			UpdateOptions{Type: SyncPodUpdate, Pod: p1, StartTime: t1}},
		{"latest pod wins",
			&UpdateOptions{Type: SyncPodUpdate, Pod: p1},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2}},
		{"a pending create is not downgraded",
			&UpdateOptions{Type: SyncPodCreate, Pod: p1},
			UpdateOptions{Type: SyncPodSync, Pod: p2},
			UpdateOptions{Type: SyncPodCreate, Pod: p2}},
		{"a pending kill sticks",
			&UpdateOptions{Type: SyncPodKill, Pod: p1, KillReason: "Evicted", KillMessage: "low memory", KillGracePeriod: ptr.To[int64](3)},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2},
			UpdateOptions{Type: SyncPodKill, Pod: p2, KillReason: "Evicted", KillMessage: "low memory", KillGracePeriod: ptr.To[int64](3)}},
		{"a kill replaces a sync",
			&UpdateOptions{Type: SyncPodSync, Pod: p1},
			UpdateOptions{Type: SyncPodKill, Pod: p2, KillReason: "Preempted"},
			UpdateOptions{Type: SyncPodKill, Pod: p2, KillReason: "Preempted"}},
		{"the oldest start time is kept",
			&UpdateOptions{Type: SyncPodUpdate, Pod: p1, StartTime: t1},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2, StartTime: t2},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2, StartTime: t1}},
		{"a zero start time does not win",
			&UpdateOptions{Type: SyncPodUpdate, Pod: p1},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2, StartTime: t2},
			UpdateOptions{Type: SyncPodUpdate, Pod: p2, StartTime: t2}},
		{"a runtime kill keeps the pending config pod",
			&UpdateOptions{Type: SyncPodUpdate, Pod: p1},
			UpdateOptions{Type: SyncPodKill, RuntimePod: rt},
			UpdateOptions{Type: SyncPodKill, Pod: p1, RuntimePod: rt}},
		{"runtime kills coalesce",
			&UpdateOptions{Type: SyncPodKill, RuntimePod: rt},
			UpdateOptions{Type: SyncPodKill},
			UpdateOptions{Type: SyncPodKill, RuntimePod: rt}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := coalesce(tc.pending, tc.next)
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("coalesce mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateEvent(t *testing.T) {
	terminal := func(phase corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = phase } }
	tests := []struct {
		name string
		opts UpdateOptions
		want Event
	}{
		{"create", UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")}, UpdateSync},
		{"update", UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "1")}, UpdateSync},
		{"sync", UpdateOptions{Type: SyncPodSync, Pod: newPod("a", "1")}, UpdateSync},
		{"running", UpdateOptions{Type: SyncPodSync, Pod: newPod("a", "1", terminal(corev1.PodRunning))}, UpdateSync},
		{"kill", UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1")}, UpdateKill},
		{"orphan", UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "a"}}, UpdateKill},
		{"deleting", UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "1", deleting(5))}, UpdateKill},
		{"succeeded", UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "1", terminal(corev1.PodSucceeded))}, UpdateKill},
		{"failed", UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "1", terminal(corev1.PodFailed))}, UpdateKill},
	}
	for _, tc := range tests {
		if got := updateEvent(tc.opts); got != tc.want {
			t.Errorf("%s: updateEvent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestResultEvent(t *testing.T) {
	pod := UpdateOptions{Pod: newPod("a", "1")}
	orphan := UpdateOptions{RuntimePod: &runtimestate.Pod{UID: "a"}}
	boom := errors.New("boom")
	tests := []struct {
		name    string
		s       step
		outcome SyncOutcome
		err     error
		want    Event
	}{
		{"sync ok", step{action: CallSyncPod, opts: pod}, SyncSteady, nil, SyncOK},
		{"sync again", step{action: CallSyncPod, opts: pod}, SyncAgain, nil, SyncReturnedAgain},
		{"sync terminal", step{action: CallSyncPod, opts: pod}, SyncTerminal, nil, SyncReturnedTerminal},
		{"sync error wins over terminal", step{action: CallSyncPod, opts: pod}, SyncTerminal, boom, SyncFailed},
		{"sync error wins over again", step{action: CallSyncPod, opts: pod}, SyncAgain, boom, SyncFailed},
		{"terminating ok", step{action: CallSyncTerminatingPod, opts: pod}, SyncSteady, nil, TerminatingDone},
		{"orphan ok", step{action: CallSyncTerminatingPod, opts: orphan}, SyncSteady, nil, OrphanTerminatingDone},
		{"terminating error", step{action: CallSyncTerminatingPod, opts: pod}, SyncSteady, boom, TerminatingFailed},
		{"orphan error", step{action: CallSyncTerminatingPod, opts: orphan}, SyncSteady, boom, TerminatingFailed},
		{"terminated ok", step{action: CallSyncTerminatedPod, opts: pod}, SyncSteady, nil, TerminatedDone},
		{"terminated error", step{action: CallSyncTerminatedPod, opts: pod}, SyncSteady, boom, TerminatedFailed},
	}
	for _, tc := range tests {
		if got := resultEvent(tc.s, tc.outcome, tc.err); got != tc.want {
			t.Errorf("%s: resultEvent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
