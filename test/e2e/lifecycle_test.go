package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestClusterLifecycle checks container hooks, termination messages,
// sidecars and readiness gates on a berth node joined to a real control
// plane. The subtests share the cluster and run in order.
func TestClusterLifecycle(t *testing.T) {
	e := startClusterEnv(t)
	// A short resync lets a readiness gate patched through the API reach
	// the Ready condition quickly.
	f, err := os.OpenFile(e.node.config, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\nsyncFrequency: 5s\n")
	must(t, err)
	must(t, f.Close())
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	t.Run("PostStartOutputVisible", e.testPostStart)
	t.Run("PreStopRunsBeforeStop", e.testPreStop)
	t.Run("FailingPostStartKillsContainer", e.testFailingPostStart)
	t.Run("TerminationMessages", e.testTerminationMessages)
	t.Run("SidecarsStartBeforeAndStopAfter", e.testSidecars)
	t.Run("SidecarStartupProbeHoldsMainContainer", e.testSidecarStartupProbe)
	t.Run("ReadinessGate", e.testReadinessGate)
}

// lifecyclePod is a one-container pod with no service account token.
func lifecyclePod(name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](10),
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", script},
			}},
		},
	}
}

// withHostDir mounts a fresh host directory (world-writable) at /data in
// every container and returns its host path.
func withHostDir(t *testing.T, pod *corev1.Pod) string {
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o777))
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}}})
	mount := corev1.VolumeMount{Name: "data", MountPath: "/data"}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].VolumeMounts = append(pod.Spec.InitContainers[i].VolumeMounts, mount)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mount)
	}
	return dir
}

func execHook(script string) *corev1.LifecycleHandler {
	return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}
}

// deleteAndWait deletes the pod and waits for its API object to go.
func (e *clusterEnv) deleteAndWait(t *testing.T, name string) {
	t.Helper()
	must(t, e.admin.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}))
	e.waitAPI(t, "pod "+name+" gone", func(ctx context.Context) (bool, error) {
		_, err := e.getPod(ctx, name)
		return apierrors.IsNotFound(err), nil
	})
}

func (e *clusterEnv) testPostStart(t *testing.T) {
	pod := lifecyclePod("hook-poststart", "mkdir -p /www && exec httpd -f -p 8080 -h /www")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{
		PostStart: execHook("mkdir -p /www && echo written-by-poststart > /www/hook.txt"),
	}
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	running := e.waitPodRunning(t, pod.Name)
	e.node.waitFor("the container serves what postStart wrote", func() bool {
		b, err := httpGet("http://" + running.Status.PodIP + ":8080/hook.txt")
		return err == nil && strings.TrimSpace(b) == "written-by-poststart"
	})
	e.deleteAndWait(t, pod.Name)
}

func (e *clusterEnv) testPreStop(t *testing.T) {
	pod := lifecyclePod("hook-prestop", `trap 'echo term >> /data/order; exit 0' TERM
echo started >> /data/order
while true; do sleep 0.2; done`)
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: execHook("echo prestop >> /data/order")}
	dir := withHostDir(t, pod)
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, pod.Name)
	e.deleteAndWait(t, pod.Name)
	order := filepath.Join(dir, "order")
	e.node.waitFor("the SIGTERM trap ran", func() bool {
		b, _ := readFile(order)
		return strings.Contains(b, "term")
	})
	b, _ := readFile(order)
	if got := strings.Fields(b); strings.Join(got, ",") != "started,prestop,term" {
		t.Errorf("order on the host = %q, want started, prestop, term", got)
	}
}

func (e *clusterEnv) testFailingPostStart(t *testing.T) {
	pod := lifecyclePod("hook-fails", "exec sleep 3600")
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: execHook("echo no way >&2; exit 3")}
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	e.waitEvent(t, pod.Name, "FailedPostStartHook", `exited with 3: no way`)
	e.waitAPI(t, "the container restarted after the failed hook", func(ctx context.Context) (bool, error) {
		p, err := e.getPod(ctx, pod.Name)
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, err
		}
		s := p.Status.ContainerStatuses[0]
		return s.RestartCount >= 1 && s.State.Running == nil, nil
	})
	p, err := e.getPod(context.Background(), pod.Name)
	must(t, err)
	if s := p.Status.ContainerStatuses[0]; s.State.Waiting == nil ||
		(s.State.Waiting.Reason != "PostStartHookError" && s.State.Waiting.Reason != "CrashLoopBackOff") {
		t.Errorf("container state = %+v, want waiting with PostStartHookError or CrashLoopBackOff", s.State)
	}
	if !e.hasEvent(t, pod.Name, "Killing", "FailedPostStartHook") {
		t.Error("no Killing event with the message FailedPostStartHook")
	}
	e.deleteAndWait(t, pod.Name)
}

func (e *clusterEnv) testTerminationMessages(t *testing.T) {
	pod := lifecyclePod("term-msg", "echo custom message > /dev/termination-log; exit 1")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
		Name: "logs", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:                  []string{"sh", "-c", "echo first line; echo last words; exit 2"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}, corev1.Container{
		Name: "file-wins", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:                  []string{"sh", "-c", "echo from the file > /dev/termination-log; echo from the logs; exit 3"},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	})
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	var p *corev1.Pod
	e.waitAPI(t, "pod failed", func(ctx context.Context) (bool, error) {
		p, err = e.getPod(ctx, pod.Name)
		return err == nil && p.Status.Phase == corev1.PodFailed, err
	})
	want := map[string]string{"main": "custom message\n", "logs": "first line\nlast words\n", "file-wins": "from the file\n"}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.Message != want[s.Name] {
			t.Errorf("container %s: state %+v, want terminated with message %q", s.Name, s.State, want[s.Name])
		}
	}
	e.deleteAndWait(t, pod.Name)
}

func (e *clusterEnv) testReadinessGate(t *testing.T) {
	const gate = "example.com/load-balancer"
	pod := lifecyclePod("gated", "exec sleep 3600")
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "containers ready, pod not ready", func(ctx context.Context) (bool, error) {
		p, err := e.getPod(ctx, pod.Name)
		if err != nil {
			return false, err
		}
		ready := findPodCondition(p, corev1.PodReady)
		return hasCondition(p, corev1.ContainersReady, corev1.ConditionTrue) && ready != nil &&
			ready.Status == corev1.ConditionFalse && ready.Reason == "ReadinessGatesNotReady" &&
			ready.Message == `corresponding condition of pod readiness gate "`+gate+`" does not exist.`, nil
	})
	patch := `{"status":{"conditions":[{"type":"` + gate + `","status":"True"}]}}`
	_, err = e.admin.CoreV1().Pods("default").Patch(context.Background(), pod.Name, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}, "status")
	must(t, err)
	e.waitAPI(t, "pod Ready once the gate is True", func(ctx context.Context) (bool, error) {
		p, err := e.getPod(ctx, pod.Name)
		return err == nil && hasCondition(p, corev1.PodReady, corev1.ConditionTrue) &&
			hasCondition(p, gate, corev1.ConditionTrue), err
	})
	e.deleteAndWait(t, pod.Name)
}

func findPodCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
