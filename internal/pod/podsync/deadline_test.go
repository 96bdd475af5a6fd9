package podsync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// TestSyncPodActiveDeadline: the plan's deadline reaches the worker as
// WakeAt; past it the pod is Failed with DeadlineExceeded (one Normal
// event), nothing is applied, and the terminating pod keeps that status
// even when its containers exit 0 on SIGTERM.
func TestSyncPodActiveDeadline(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	rt, store, rec := &runtime{}, podstatus.NewStore(clock.RealClock{}), &events{}
	s, err := New(Config{
		Runtime: rt, Statuses: store, Clock: clk, PodsDir: t.TempDir(), Recorder: rec,
		Desired: func(types.UID) bool { return true },
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod(corev1.RestartPolicyAlways)
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)

	// First sync: the pod gets its start time now, and a wake-up at the
	// deadline.
	res, err := s.SyncPod(ctx, podworker.SyncPodCreate, pod, &runtimestate.Pod{UID: "u1"})
	if err != nil || res != (podworker.SyncResult{Outcome: podworker.SyncSteady, WakeAt: time.Unix(1600, 0)}) {
		t.Fatalf("first SyncPod = %+v, %v; want steady, wake at 1600", res, err)
	}
	// The deadline lowered to 30 s, synced 30 s after the start.
	clk.SetTime(time.Unix(1030, 0))
	pod = pod.DeepCopy()
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	rt.calls = nil
	res, err = s.SyncPod(ctx, podworker.SyncPodUpdate, pod, running())
	if err != nil || res != (podworker.SyncResult{Outcome: podworker.SyncTerminal}) {
		t.Fatalf("SyncPod past the deadline = %+v, %v; want terminal", res, err)
	}
	if len(rt.calls) != 0 {
		t.Errorf("a pod past its deadline must not be applied, got %v", rt.calls)
	}
	want := []string{"Failed", podstatusReason, podstatus.DeadlineExceeded().Message}
	st, _ := store.Get("u1")
	if diff := cmp.Diff(want, []string{string(st.Phase), st.Reason, st.Message}); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	// Terminating: the containers exit 0 on SIGTERM; the pod stays Failed.
	rt.after = exited(0)
	if err := s.SyncTerminatingPod(ctx, pod, running(), podworker.Kill{GracePeriod: 30}); err != nil {
		t.Fatal(err)
	}
	st, _ = store.Get("u1")
	if diff := cmp.Diff(want, []string{string(st.Phase), st.Reason, st.Message}); diff != "" {
		t.Errorf("status after the kill (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"DeadlineExceeded"}, rec.reasons); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

const podstatusReason = "DeadlineExceeded"
