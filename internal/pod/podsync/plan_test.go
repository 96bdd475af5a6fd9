package podsync

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
)

// planEnv is a Syncer over the real executor (kuberuntime) and the
// in-memory CRI, so one sync shows both ends of its one plan: the status
// the plan implies and the CRI calls the executor makes for it.
type planEnv struct {
	t     *testing.T
	ctx   context.Context
	clock *testingclock.FakeClock
	fake  *crifake.Fake
	rt    *kuberuntime.Manager
	s     *Syncer
	store *podstatus.Store
}

type nopRecorder struct{}

func (nopRecorder) Eventf(*corev1.Pod, string, string, string, ...any)                  {}
func (nopRecorder) ContainerEventf(*corev1.Pod, string, string, string, string, ...any) {}

func newPlanEnv(t *testing.T) *planEnv {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fake := crifake.New(clk)
	fake.AddImage("busybox:1.36")
	client := fake.Client(t)
	dir := t.TempDir()
	rt, err := kuberuntime.New(kuberuntime.Config{
		Runtime: client.Runtime, Images: client.Image, Clock: clk, Recorder: nopRecorder{},
		PodLogsDir: dir + "/logs", PodsDir: dir + "/pods", KubernetesVersion: "v1.37.2",
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &planEnv{t: t, ctx: ctx, clock: clk, fake: fake, rt: rt, store: podstatus.NewStore(clock.RealClock{})}
	if e.s, err = New(Config{Runtime: rt, Statuses: e.store, Clock: clk, PodsDir: dir + "/pods",
		Desired: func(types.UID) bool { return true }}); err != nil {
		t.Fatal(err)
	}
	return e
}

// sync runs one SyncPod over the runtime's current state.
func (e *planEnv) sync(pod *corev1.Pod) {
	e.t.Helper()
	rt, err := e.rt.PodStatus(e.ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = e.s.SyncPod(e.ctx, podworker.SyncPodSync, pod, rt) // a waiting container is an error; the status tells
}

// exit makes the named container's running instance exit with code.
func (e *planEnv) exit(name string, code int32) {
	e.t.Helper()
	for _, c := range e.fake.Containers() {
		if c.GetMetadata().GetName() == name && c.GetState() == 1 /* CONTAINER_RUNNING */ {
			if err := e.fake.ExitContainer(c.GetId(), code, ""); err != nil {
				e.t.Fatal(err)
			}
			return
		}
	}
	e.t.Fatalf("no running instance of %q", name)
}

// mutating are the CRI calls that change the runtime.
var mutating = []string{"RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "PullImage",
	"CreateContainer", "StartContainer", "StopContainer", "RemoveContainer"}

func mutatingCalls(all []string) []string {
	var out []string
	for _, c := range all {
		if slices.Contains(mutating, c) {
			out = append(out, c)
		}
	}
	return out
}

// TestOnePlanFeedsStatusAndExecutor: for each row, the last sync's one plan
// shows both in the pod status it generates (phase, the container's state)
// and in the CRI calls the executor makes.
func TestOnePlanFeedsStatusAndExecutor(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name      string
		policy    corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		before    func(e *planEnv, pod *corev1.Pod) // drives the runtime before the last sync
		phase     corev1.PodPhase
		state     string // "running", "waiting:<reason>", "terminated:<reason>"
		calls     []string
	}{
		{
			name:   "fresh pod: sandbox and container are made; status ContainerCreating",
			policy: corev1.RestartPolicyAlways, before: func(*planEnv, *corev1.Pod) {},
			phase: corev1.PodPending, state: "waiting:ContainerCreating",
			calls: []string{"RunPodSandbox", "CreateContainer", "StartContainer"},
		},
		{
			name:   "steady pod: nothing to do",
			policy: corev1.RestartPolicyAlways, before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod) },
			phase: corev1.PodRunning, state: "running",
		},
		{
			name:   "exited, Always, first restart: restarted at once",
			policy: corev1.RestartPolicyAlways,
			before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod); e.exit("app", 1) },
			phase:  corev1.PodRunning, state: "terminated:Error",
			calls: []string{"CreateContainer", "StartContainer"},
		},
		{
			name:   "exited again within the back-off: waiting CrashLoopBackOff, no start (old instances are the container GC's)",
			policy: corev1.RestartPolicyAlways,
			before: func(e *planEnv, pod *corev1.Pod) {
				e.sync(pod)
				e.exit("app", 1)
				e.sync(pod)
				e.exit("app", 1)
			},
			phase: corev1.PodRunning, state: "waiting:CrashLoopBackOff",
		},
		{
			name:   "pod Never, exited 1: left down; Failed",
			policy: corev1.RestartPolicyNever,
			before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod); e.exit("app", 1) },
			phase:  corev1.PodFailed, state: "terminated:Error",
		},
		{
			name:   "pod Never, container Always, exited 0: restarted; Running",
			policy: corev1.RestartPolicyNever, container: &always,
			before: func(e *planEnv, pod *corev1.Pod) { e.sync(pod); e.exit("app", 0) },
			phase:  corev1.PodRunning, state: "terminated:Completed",
			calls: []string{"CreateContainer", "StartContainer"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newPlanEnv(t)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
				Spec: corev1.PodSpec{RestartPolicy: tc.policy, Containers: []corev1.Container{{
					Name: "app", Image: "busybox:1.36", RestartPolicy: tc.container}}},
			}
			tc.before(e, pod)
			e.clock.Step(time.Second)
			e.fake.ResetCalls()
			e.sync(pod)
			if diff := cmp.Diff(tc.calls, mutatingCalls(e.fake.Calls())); diff != "" {
				t.Errorf("CRI calls (-want +got):\n%s", diff)
			}
			st, _ := e.store.Get(pod.UID)
			if st.Phase != tc.phase {
				t.Errorf("phase = %s, want %s", st.Phase, tc.phase)
			}
			if got := stateOf(st.ContainerStatuses[0].State); got != tc.state {
				t.Errorf("container state = %s, want %s", got, tc.state)
			}
		})
	}
}

func stateOf(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	case s.Terminated != nil:
		return "terminated:" + s.Terminated.Reason
	}
	return "none"
}

// TestForgetDropsTheRecord: the back-off a pod built up goes with its
// worker; a pod that comes back with the same UID starts afresh.
func TestForgetDropsTheRecord(t *testing.T) {
	e := newPlanEnv(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
	e.sync(pod)
	e.exit("app", 1)
	e.sync(pod) // first restart
	e.exit("app", 1)
	e.sync(pod)
	if st, _ := e.store.Get(pod.UID); stateOf(st.ContainerStatuses[0].State) != "waiting:CrashLoopBackOff" {
		t.Fatalf("state = %s, want waiting:CrashLoopBackOff", stateOf(st.ContainerStatuses[0].State))
	}
	e.s.Forget(e.ctx, pod.UID)
	e.fake.ResetCalls()
	e.sync(pod)
	if diff := cmp.Diff([]string{"CreateContainer", "StartContainer"}, mutatingCalls(e.fake.Calls())); diff != "" {
		t.Errorf("after Forget, CRI calls (-want +got):\n%s", diff)
	}
}
