package kuberuntime

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// resetPod is twoContainerPod whose "side" has a preStop hook (a reset
// must not run it) with app exited and side running.
func resetPod(t *testing.T, e *env) (*corev1.Pod, *runtimestate.Pod) {
	t.Helper()
	e.fake.AddImage("busybox:1.36")
	pod := twoContainerPod()
	pod.Spec.Containers[1].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
	e.sync(pod)
	if err := e.fake.ExitContainer(e.running(pod, "app").ID, 42, ""); err != nil {
		t.Fatal(err)
	}
	return pod, e.status(pod)
}

func resetOf(rt *runtimestate.Pod, kill map[string]bool, names ...string) []podplan.ResetContainer {
	var out []podplan.ResetContainer
	for _, n := range names {
		c := rt.LatestContainer(n)
		out = append(out, podplan.ResetContainer{ContainerRef: podplan.ContainerRef{ID: c.ID, Name: c.Name}, Kill: kill[n]})
	}
	return out
}

// TestApplyReset: a reset kills the running containers (no preStop hook,
// RestartAllContainers Killing event) and removes every container in the
// plan's order, does nothing else and leaves the sandbox.
func TestApplyReset(t *testing.T) {
	e := newEnv(t)
	pod, rt := resetPod(t, e)
	e.fake.ResetCalls()
	e.events.take()
	plan := podplan.Actions{RestartAll: podplan.RestartAllResetting,
		Reset: resetOf(rt, map[string]bool{"side": true}, "side", "app")}
	res, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(res.Failures) != 0 {
		t.Errorf("failures = %v", res.Failures)
	}
	if diff := cmp.Diff([]string{"StopContainer", "RemoveContainer", "RemoveContainer"}, e.fake.Calls()); diff != "" {
		t.Errorf("CRI calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal Killing killing"}, e.events.take()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	after := e.status(pod)
	if len(after.Containers) != 0 {
		t.Errorf("containers left after the reset: %+v", after.Containers)
	}
	if len(after.Sandboxes) != 1 || after.Sandboxes[0].ID != rt.Sandboxes[0].ID || after.Sandboxes[0].State != runtimestate.SandboxReady {
		t.Errorf("sandboxes after the reset = %+v, want the same one, ready", after.Sandboxes)
	}
}

// TestApplyResetStopsAtFirstFailure: a failed removal ends the reset with
// an error; the containers after it are not touched.
func TestApplyResetStopsAtFirstFailure(t *testing.T) {
	e := newEnv(t)
	pod, rt := resetPod(t, e)
	e.fake.ResetCalls()
	e.fake.InjectError("RemoveContainer", cri.StatusError(cri.ErrUnavailable, "runtime down"))
	plan := podplan.Actions{RestartAll: podplan.RestartAllResetting,
		Reset: resetOf(rt, map[string]bool{"side": true}, "side", "app")}
	_, err := e.m.Apply(e.ctx, pod, rt, plan, ApplyOptions{})
	if err == nil || !errors.Is(err, cri.ErrUnavailable) {
		t.Fatalf("Apply = %v, want the removal's error", err)
	}
	if diff := cmp.Diff([]string{"StopContainer", "RemoveContainer"}, e.fake.Calls()); diff != "" {
		t.Errorf("CRI calls (-want +got):\n%s", diff)
	}
	after := e.status(pod)
	if !slices.ContainsFunc(after.Containers, func(c runtimestate.Container) bool { return c.Name == "app" }) {
		t.Errorf("app was removed after the failure: %+v", after.Containers)
	}
}
