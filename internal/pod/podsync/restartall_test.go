package podsync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// restartAllPod is a Never pod with an init container, a sidecar and two
// regular containers; src restarts all containers when it exits 42.
func restartAllPod() *corev1.Pod {
	always, never := corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever
	c := func(name string) corev1.Container { return corev1.Container{Name: name, Image: "busybox:1.36"} }
	setup, proxy, src, web := c("setup"), c("proxy"), c("src"), c("web")
	proxy.RestartPolicy = &always
	src.RestartPolicy = &never
	src.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			InitContainers: []corev1.Container{setup, proxy}, Containers: []corev1.Container{src, web}},
	}
}

// syncOutcome runs one SyncPod a second later over the runtime's current
// state and returns its outcome and the mutating CRI calls it made.
func (e *planEnv) syncOutcome(pod *corev1.Pod) (podworker.SyncOutcome, []string) {
	e.t.Helper()
	e.clock.Step(time.Second)
	e.fake.ResetCalls()
	rt, err := e.rt.PodStatus(e.ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := e.s.SyncPod(e.ctx, podworker.SyncPodSync, pod, rt)
	if err != nil {
		e.t.Fatalf("SyncPod: %v", err)
	}
	return out.Outcome, mutatingCalls(e.fake.Calls())
}

func (e *planEnv) runtime(pod *corev1.Pod) *runtimestate.Pod {
	e.t.Helper()
	rt, err := e.rt.PodStatus(e.ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	return rt
}

func restartingCondition(st corev1.PodStatus) corev1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == corev1.AllContainersRestarting {
			return c.Status
		}
	}
	return ""
}

// TestRestartAllContainersCycle drives a full RestartAllContainers cycle
// through the syncer, the real executor and the in-memory CRI: the exit
// with the rule resets every container (running ones killed) and asks for
// another sync at once; that sync starts the pod over in the same sandbox,
// init container first, then the sidecar, then the regular containers;
// the statuses count one restart each and the condition goes True, then
// False.
func TestRestartAllContainersCycle(t *testing.T) {
	e := newPlanEnv(t)
	pod := restartAllPod()
	e.sync(pod)
	e.exit("setup", 0)
	e.sync(pod)
	e.sync(pod)
	before := e.runtime(pod)
	if len(before.Containers) != 4 || len(before.Sandboxes) != 1 {
		t.Fatalf("before the exit: %+v", before)
	}
	sandbox := before.Sandboxes[0].ID
	oldIDs := map[string]string{}
	for _, c := range before.Containers {
		oldIDs[c.Name] = c.ID
	}

	e.exit("src", 42)
	out, calls := e.syncOutcome(pod)
	if out != podworker.SyncAgain {
		t.Errorf("reset sync outcome = %v, want again", out)
	}
	// web (killed), setup, proxy (killed), then src, the source.
	if diff := cmp.Diff([]string{"StopContainer", "RemoveContainer", "RemoveContainer", "StopContainer", "RemoveContainer", "RemoveContainer"}, calls); diff != "" {
		t.Errorf("reset CRI calls (-want +got):\n%s", diff)
	}
	if rt := e.runtime(pod); len(rt.Containers) != 0 || len(rt.Sandboxes) != 1 || rt.Sandboxes[0].ID != sandbox {
		t.Fatalf("after the reset: %+v, want no container and the same sandbox", rt)
	}
	st, _ := e.store.Get(pod.UID)
	if restartingCondition(st) != corev1.ConditionTrue {
		t.Errorf("AllContainersRestarting after the reset = %q, want True", restartingCondition(st))
	}

	// The next syncs start setup, then (once it exited 0) proxy, then src
	// and web; the condition stays False.
	steps := []struct {
		exit  string // exits 0 before the sync
		calls []string
	}{
		{calls: []string{"CreateContainer", "StartContainer"}},
		{exit: "setup", calls: []string{"CreateContainer", "StartContainer"}},
		{calls: []string{"CreateContainer", "StartContainer", "CreateContainer", "StartContainer"}},
	}
	for i, s := range steps {
		if s.exit != "" {
			e.exit(s.exit, 0)
		}
		out, calls := e.syncOutcome(pod)
		if out != podworker.SyncSteady {
			t.Errorf("step %d: outcome %v, want steady", i, out)
		}
		if diff := cmp.Diff(s.calls, calls); diff != "" {
			t.Errorf("step %d: CRI calls (-want +got):\n%s", i, diff)
		}
		st, _ := e.store.Get(pod.UID)
		if restartingCondition(st) != corev1.ConditionFalse {
			t.Errorf("step %d: AllContainersRestarting = %q, want False", i, restartingCondition(st))
		}
	}

	after := e.runtime(pod)
	for _, c := range after.Containers {
		if c.SandboxID != sandbox {
			t.Errorf("%s started in sandbox %s, want %s", c.Name, c.SandboxID, sandbox)
		}
		if c.ID == oldIDs[c.Name] {
			t.Errorf("%s kept its container ID %s", c.Name, c.ID)
		}
	}
	e.sync(pod) // the status of the final runtime state
	st, _ = e.store.Get(pod.UID)
	if st.Phase != corev1.PodRunning || restartingCondition(st) != corev1.ConditionFalse {
		t.Errorf("final phase %s, AllContainersRestarting %q; want Running, False", st.Phase, restartingCondition(st))
	}
	for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
		if cs.RestartCount != 1 {
			t.Errorf("%s restartCount = %d, want 1", cs.Name, cs.RestartCount)
		}
		if cs.LastTerminationState.Terminated == nil {
			t.Errorf("%s has no last termination", cs.Name)
		}
		want := cs.Name != "setup" // the init container completed; the others run
		if (cs.State.Running != nil) != want {
			t.Errorf("%s state %+v", cs.Name, cs.State)
		}
	}
	if got := st.ContainerStatuses[0].LastTerminationState.Terminated.Reason; got != podstatus.ReasonRestartingAllContainers {
		t.Errorf("src last termination reason %q, want %s", got, podstatus.ReasonRestartingAllContainers)
	}
}
