package kuberuntime

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// configNamed returns the config the runtime was given for the container
// of the given name, or fails.
func (e *env) configNamed(name string) *runtimeapi.ContainerConfig {
	e.t.Helper()
	for _, c := range e.fake.ContainerConfigs() {
		if c.GetMetadata().GetName() == name {
			return c
		}
	}
	e.t.Fatalf("no container %q was created", name)
	return nil
}

func debugger(name, target string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: name, Image: "busybox:1.36", ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sh"},
			Stdin: true, TTY: true,
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		},
		TargetContainerName: target,
	}
}

// TestSyncPodEphemeral: an ephemeral container added to a running pod is
// started once, in the target's PID namespace, typed ephemeral; after it
// exits it is not started again; a pod kill stops it.
func TestSyncPodEphemeral(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	e.sync(pod)
	app := e.running(pod, "app")
	e.events.take()

	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger", "app")}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	dbg := e.running(pod, "debugger")
	if dbg.SandboxID != app.SandboxID || dbg.RestartCount != 0 {
		t.Errorf("debugger = %+v, want restart count 0 in the app's sandbox %s", dbg, app.SandboxID)
	}
	cfg := e.configNamed("debugger")
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns.GetPid() != runtimeapi.NamespaceMode_TARGET || ns.GetTargetId() != app.ID {
		t.Errorf("debugger PID namespace = %v target %q, want TARGET %q", ns.GetPid(), ns.GetTargetId(), app.ID)
	}
	if got := cfg.GetAnnotations()["io.kubernetes.container.type"]; got != "ephemeral" {
		t.Errorf("type annotation = %q, want ephemeral", got)
	}
	if !cfg.GetStdin() || !cfg.GetTty() || !slices.Equal(cfg.GetCommand(), []string{"sh"}) {
		t.Errorf("config stdin %v tty %v command %q, want the spec's", cfg.GetStdin(), cfg.GetTty(), cfg.GetCommand())
	}
	if got := e.events.take(); !slices.Contains(got, "Normal Started Started container debugger") {
		t.Errorf("events = %q, want the debugger's Started", got)
	}

	if err := e.fake.ExitContainer(dbg.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetCalls()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures after the exit: %v", f)
	}
	if slices.Contains(e.fake.Calls(), "CreateContainer") {
		t.Errorf("an exited ephemeral container was started again: %q", e.fake.Calls())
	}

	rt := e.status(pod)
	if err := e.m.KillPod(e.ctx, pod, rt, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.status(pod).Containers {
		if c.State == runtimestate.ContainerRunning {
			t.Errorf("container %s still runs after the pod kill", c.Name)
		}
	}
}

// TestSyncPodEphemeralTargetNotRunning: the plan holds the container back
// and Apply records upstream's Failed event for it, not a BackOff.
func TestSyncPodEphemeralTargetNotRunning(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36"})
	e.sync(pod)
	if err := e.fake.ExitContainer(e.running(pod, "app").ID, 1, ""); err != nil {
		t.Fatal(err)
	}
	e.events.take()
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger", "app")}
	f := e.sync(pod)
	want := runtimestate.StartFailure{Reason: podplan.WaitingReasonCreateContainerConfigError, Message: "target container app is not running"}
	if f["debugger"] != want {
		t.Errorf("failure = %+v, want %+v", f["debugger"], want)
	}
	if got := e.events.take(); !slices.Equal(got, []string{"Warning Failed Error: target container app is not running"}) {
		t.Errorf("events = %q, want one Failed", got)
	}
	if e.status(pod).LatestContainer("debugger") != nil {
		t.Error("the debugger was created while its target does not run")
	}
}
