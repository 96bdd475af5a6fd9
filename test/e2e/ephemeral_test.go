package e2e

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterEphemeralContainers does what `kubectl debug` does to a pod
// on a berth node: it adds ephemeral containers through the API's
// ephemeralcontainers subresource and checks that each starts once, shows
// in status.ephemeralContainerStatuses, serves logs and exec through the
// kubelet API, sees its target's processes with targetContainerName, and
// is never restarted after it exits, while the pod stays Running and
// Ready (upstream's "Ephemeral Containers [NodeConformance]" specs).
func TestClusterEphemeralContainers(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	// The target runs "sleep 3601", which no ephemeral container runs.
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), busyboxPod("debuggee", "exec sleep 3601"), metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, "debuggee")

	t.Run("ExecAndLogs", e.testEphemeralExecAndLogs)
	t.Run("TargetProcesses", e.testEphemeralTarget)
	t.Run("AttachStdin", e.testEphemeralAttach)
	t.Run("ExitedStaysExited", e.testEphemeralExited)
}

func (e *clusterEnv) testEphemeralExecAndLogs(t *testing.T) {
	e.addEphemeral(t, "debuggee", debugContainer("debugger", "", "echo debugger up; exec sleep 3600"))
	dbg := e.waitEphemeral(t, "debuggee", "debugger", func(s corev1.ContainerStatus) bool { return s.State.Running != nil })
	if dbg.RestartCount != 0 || !strings.HasPrefix(dbg.ContainerID, "containerd://") || dbg.ImageID == "" || dbg.Image != busybox {
		t.Errorf("debugger status = %+v", dbg)
	}
	e.waitAPI(t, "debugger logs through the kubelet API", func(ctx context.Context) (bool, error) {
		out, err := e.cl.Kubectl(ctx, "logs", "debuggee", "-c", "debugger")
		return strings.Contains(out, "debugger up"), err
	})
	if got := e.kubectl(t, "exec", "debuggee", "-c", "debugger", "--", "echo", "in", "debugger"); got != "in debugger\n" {
		t.Errorf("exec in the debugger = %q", got)
	}
	if ps := e.kubectl(t, "exec", "debuggee", "-c", "debugger", "--", "ps"); strings.Contains(ps, "sleep 3601") {
		t.Errorf("an untargeted debugger sees the target's processes:\n%s", ps)
	}
}

func (e *clusterEnv) testEphemeralTarget(t *testing.T) {
	e.addEphemeral(t, "debuggee", debugContainer("targeted", "main", "exec sleep 3600"))
	e.waitEphemeral(t, "debuggee", "targeted", func(s corev1.ContainerStatus) bool { return s.State.Running != nil })
	if ps := e.kubectl(t, "exec", "debuggee", "-c", "targeted", "--", "ps"); !strings.Contains(ps, "sleep 3601") {
		t.Errorf("the targeted debugger does not see its target's processes:\n%s", ps)
	}
}

// testEphemeralAttach: kubectl debug -i attaches to the ephemeral
// container's stdin once it runs.
func (e *clusterEnv) testEphemeralAttach(t *testing.T) {
	reader := debugContainer("reader", "", "while read line; do echo got $line; done; sleep 3600")
	reader.TTY = false
	e.addEphemeral(t, "debuggee", reader)
	e.waitEphemeral(t, "debuggee", "reader", func(s corev1.ContainerStatus) bool { return s.State.Running != nil })
	// A kernel pipe buffers the writes, so a write never waits on kubectl.
	stdinR, stdinW, err := os.Pipe()
	must(t, err)
	defer stdinR.Close()
	defer stdinW.Close()
	_, out, done := background(t, stdinR, e.cl.KubectlPath(), e.kubectlArgs("attach", "-i", "debuggee", "-c", "reader")...)
	e.node.waitFor("attached ephemeral reader to answer", func() bool {
		select {
		case err := <-done:
			t.Fatalf("kubectl attach ended: %v: %s", err, out.String())
		default:
		}
		_, _ = io.WriteString(stdinW, "ping\n")
		return strings.Contains(out.String(), "got ping")
	})
}

func (e *clusterEnv) testEphemeralExited(t *testing.T) {
	e.addEphemeral(t, "debuggee", debugContainer("oneshot", "", "echo done; exit 3"))
	done := e.waitEphemeral(t, "debuggee", "oneshot", func(s corev1.ContainerStatus) bool { return s.State.Terminated != nil })
	if done.State.Terminated.ExitCode != 3 || done.State.Terminated.Reason != "Error" {
		t.Errorf("oneshot terminated = %+v, want exit code 3, reason Error", done.State.Terminated)
	}
	// The pod's restartPolicy is Always: an exited ephemeral container
	// still stays exited. A few PLEG relists and resyncs give berth the
	// chance to get that wrong.
	time.Sleep(5 * time.Second)
	pod, err := e.admin.CoreV1().Pods("default").Get(context.Background(), "debuggee", metav1.GetOptions{})
	must(t, err)
	after, _ := ephemeralStatus(pod, "oneshot")
	if after.State.Terminated == nil || after.ContainerID != done.ContainerID || after.RestartCount != 0 {
		t.Errorf("oneshot after its exit = %+v, want the same terminated instance", after)
	}
	if pod.Status.Phase != corev1.PodRunning || !hasCondition(pod, corev1.PodReady, corev1.ConditionTrue) {
		t.Errorf("pod phase %s, conditions %+v: ephemeral containers must not change them", pod.Status.Phase, pod.Status.Conditions)
	}
}

// debugContainer is an ephemeral busybox container running script, in the
// PID namespace of target when it is not "".
func debugContainer(name, target, script string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: name, Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"sh", "-c", script}, Stdin: true, TTY: true,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		},
		TargetContainerName: target,
	}
}

// addEphemeral adds c to the pod through the ephemeralcontainers
// subresource, as kubectl debug does.
func (e *clusterEnv) addEphemeral(t *testing.T, pod string, c corev1.EphemeralContainer) {
	t.Helper()
	ctx := context.Background()
	p, err := e.admin.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
	must(t, err)
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, c)
	_, err = e.admin.CoreV1().Pods("default").UpdateEphemeralContainers(ctx, pod, p, metav1.UpdateOptions{})
	must(t, err)
}

// waitEphemeral waits until the API shows the ephemeral container's status
// meeting cond, and returns it.
func (e *clusterEnv) waitEphemeral(t *testing.T, pod, name string, cond func(corev1.ContainerStatus) bool) corev1.ContainerStatus {
	t.Helper()
	var got corev1.ContainerStatus
	e.waitAPI(t, "ephemeral container "+name+" of "+pod, func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s, ok := ephemeralStatus(p, name)
		got = s
		return ok && cond(s), nil
	})
	return got
}

func ephemeralStatus(p *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, s := range p.Status.EphemeralContainerStatuses {
		if s.Name == name {
			return s, true
		}
	}
	return corev1.ContainerStatus{}, false
}
