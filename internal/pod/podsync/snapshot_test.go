package podsync

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// countingClock counts the syncer's reads of the time.
type countingClock struct {
	*clocktesting.FakePassiveClock
	reads int
}

func (c *countingClock) Now() time.Time { c.reads++; return c.FakePassiveClock.Now() }
func (c *countingClock) Since(t time.Time) time.Duration {
	c.reads++
	return c.FakePassiveClock.Since(t)
}

// countingProber counts the syncer's reads of the probe results.
type countingProber struct {
	probes
	reads int
}

func (p *countingProber) Snapshot(pod *corev1.Pod, rt *runtimestate.Pod) prober.Snapshot {
	p.reads++
	return p.probes.Snapshot(pod, rt)
}

// countingAllocation counts the syncer's reads of the pod's allocation.
type countingAllocation struct {
	*allocation.Manager
	reads int
}

func (a *countingAllocation) Snapshot(pod *corev1.Pod) allocation.PodSnapshot {
	a.reads++
	return a.Manager.Snapshot(pod)
}

// TestSyncPodTakesOneSnapshot: whatever path a sync takes (a first apply,
// an apply whose start failures or failed resize generate the status
// again, a terminal pod, a pod past its deadline), it reads the clock, the
// probe results and the pod's allocation once: the plan and every status
// it generates see the same snapshot.
func TestSyncPodTakesOneSnapshot(t *testing.T) {
	pending := func() *runtimestate.Pod { return &runtimestate.Pod{UID: "u1"} }
	tests := []struct {
		name  string
		pod   func() *corev1.Pod
		rt    func() *runtimestate.Pod
		setup func(f *fixture, alloc *allocation.Manager, pod *corev1.Pod)
		want  podworker.SyncOutcome
		// check says the sync took the path it is named for.
		check func(f *fixture, st corev1.PodStatus) bool
	}{
		{
			name: "first apply", pod: func() *corev1.Pod { return testPod(corev1.RestartPolicyAlways) }, rt: pending,
			want: podworker.SyncSteady,
		},
		{
			name: "start failures generate the status again", pod: func() *corev1.Pod { return testPod(corev1.RestartPolicyAlways) }, rt: pending,
			setup: func(f *fixture, _ *allocation.Manager, _ *corev1.Pod) {
				f.rt.failures = map[string]runtimestate.StartFailure{"web": {Reason: "ErrImagePull", Message: "boom"}}
			},
			want: podworker.SyncSteady,
			check: func(_ *fixture, st corev1.PodStatus) bool {
				w := st.ContainerStatuses[0].State.Waiting
				return w != nil && w.Reason == "ErrImagePull"
			},
		},
		{
			name: "a failed resize generates the status again", pod: func() *corev1.Pod { return withCPU(2, "200m") }, rt: runningWeb,
			setup: func(f *fixture, alloc *allocation.Manager, pod *corev1.Pod) {
				alloc.Admitted(f.ctx, pod)
				if err := alloc.SetActuated(pod.UID, map[string]corev1.ResourceRequirements{"web": withCPU(1, "100m").Spec.Containers[0].Resources}, nil, true); err != nil {
					t.Fatal(err)
				}
				f.rt.resizeErr = errors.New("boom")
			},
			want: podworker.SyncSteady,
			check: func(f *fixture, st corev1.PodStatus) bool {
				got := conditionsOf(st)
				return len(f.rt.plan.Resize.Containers) == 1 && len(got) == 1 && got[0] == "PodResizeInProgress/Error/2"
			},
		},
		{
			name: "terminal", pod: func() *corev1.Pod { return testPod(corev1.RestartPolicyNever) },
			rt:   func() *runtimestate.Pod { return exited(0) },
			want: podworker.SyncTerminal,
		},
		{
			name: "past its deadline", rt: runningWeb,
			pod: func() *corev1.Pod {
				p := testPod(corev1.RestartPolicyAlways)
				p.Spec.ActiveDeadlineSeconds = ptr.To[int64](10)
				return p
			},
			setup: func(f *fixture, _ *allocation.Manager, pod *corev1.Pod) {
				st := pod.Status.DeepCopy()
				st.StartTime = ptr.To(metav1.NewTime(time.Unix(900, 0)))
				f.store.Set(pod.UID, *st)
			},
			want:  podworker.SyncTerminal,
			check: func(_ *fixture, st corev1.PodStatus) bool { return st.Reason == "DeadlineExceeded" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			clk := &countingClock{FakePassiveClock: clocktesting.NewFakePassiveClock(time.Unix(1000, 0))}
			pr := &countingProber{}
			mgr, err := allocation.NewManager(allocation.Config{
				Allocated: allocation.NewMemoryStore(), Actuated: allocation.NewMemoryStore(),
				Clock: clocktesting.NewFakeClock(time.Unix(1000, 0)),
				Pods:  func() []*corev1.Pod { return nil },
				Admit: func(context.Context, *corev1.Pod, []*corev1.Pod) (bool, string, string) { return true, "", "" },
				Sync:  func(context.Context, *corev1.Pod) {}, Recorder: &resizeEvents{},
			})
			if err != nil {
				t.Fatal(err)
			}
			alloc := &countingAllocation{Manager: mgr}
			f.s.cfg.Clock, f.s.cfg.Prober, f.s.cfg.Allocation = clk, pr, alloc
			f.s.cfg.Reinspect = func(types.UID) {}
			pod := tt.pod()
			if tt.setup != nil {
				tt.setup(f, mgr, pod)
			}
			res, _ := f.s.SyncPod(f.ctx, podworker.SyncPodSync, pod, tt.rt())
			st, _ := f.store.Get(pod.UID)
			if res.Outcome != tt.want || (tt.check != nil && !tt.check(f, st)) {
				t.Fatalf("outcome = %v with status %+v; want %v and the path the case is named for", res.Outcome, st, tt.want)
			}
			if clk.reads != 1 || pr.reads != 1 || alloc.reads != 1 {
				t.Errorf("one sync read the clock %d times, the probe results %d times and the allocation %d times; want once each",
					clk.reads, pr.reads, alloc.reads)
			}
		})
	}
}
