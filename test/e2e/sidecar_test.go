package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Sidecar (restartable init container) tests, run by TestClusterLifecycle.

// sidecar is a restartable init container that logs its start and, on
// SIGTERM, its stop to /data/log.
func sidecar(name string) corev1.Container {
	return corev1.Container{
		Name: name, Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Command: []string{"sh", "-c", `trap 'echo sidecar-stop >> /data/log; exit 0' TERM
echo sidecar-start >> /data/log
while true; do sleep 0.2; done`},
	}
}

func (e *clusterEnv) testSidecars(t *testing.T) {
	// A Never pod: the sidecar starts first, the main container runs to
	// completion, then the sidecar is stopped and the pod Succeeds.
	pod := lifecyclePod("sidecar-done", "echo main-start >> /data/log; sleep 2; echo main-stop >> /data/log")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.InitContainers = []corev1.Container{sidecar("proxy")}
	dir := withHostDir(t, pod)
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "sidecar pod running with its sidecar started", func(ctx context.Context) (bool, error) {
		p, err := e.getPod(ctx, pod.Name)
		if err != nil || len(p.Status.InitContainerStatuses) != 1 {
			return false, err
		}
		s := p.Status.InitContainerStatuses[0]
		return p.Status.Phase == corev1.PodRunning && s.State.Running != nil && ptr.Deref(s.Started, false) && s.Ready, nil
	})
	var p *corev1.Pod
	e.waitAPI(t, "sidecar pod succeeded", func(ctx context.Context) (bool, error) {
		p, err = e.getPod(ctx, pod.Name)
		return err == nil && p.Status.Phase == corev1.PodSucceeded, err
	})
	b, _ := readFile(filepath.Join(dir, "log"))
	if got := strings.Join(strings.Fields(b), ","); got != "sidecar-start,main-start,main-stop,sidecar-stop" {
		t.Errorf("order on the host = %q", got)
	}
	if s := p.Status.InitContainerStatuses[0]; s.State.Terminated == nil {
		t.Errorf("sidecar status after completion = %+v, want terminated", s.State)
	}
	e.deleteAndWait(t, pod.Name)

	// Deleting a running pod stops the main container before the sidecar.
	pod = lifecyclePod("sidecar-delete", `trap 'sleep 1; echo main-stop >> /data/log; exit 0' TERM
echo main-start >> /data/log
while true; do sleep 0.2; done`)
	pod.Spec.InitContainers = []corev1.Container{sidecar("proxy")}
	dir = withHostDir(t, pod)
	_, err = e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	e.waitPodRunning(t, pod.Name)
	e.deleteAndWait(t, pod.Name)
	e.node.waitFor("the sidecar stopped", func() bool {
		b, _ := readFile(filepath.Join(dir, "log"))
		return strings.Contains(b, "sidecar-stop")
	})
	b, _ = readFile(filepath.Join(dir, "log"))
	if got := strings.Join(strings.Fields(b), ","); got != "sidecar-start,main-start,main-stop,sidecar-stop" {
		t.Errorf("order on the host after deletion = %q", got)
	}
}

func (e *clusterEnv) testSidecarStartupProbe(t *testing.T) {
	// The sidecar passes its startup probe only after a few seconds: the
	// main container must not start before.
	pod := lifecyclePod("sidecar-startup", "echo main-start >> /data/log; exec sleep 3600")
	side := sidecar("proxy")
	side.Command = []string{"sh", "-c", "sleep 3; touch /tmp/up; echo sidecar-up >> /data/log; exec sleep 3600"}
	side.StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/up"}}},
		PeriodSeconds: 1, FailureThreshold: 60,
	}
	pod.Spec.InitContainers = []corev1.Container{side}
	dir := withHostDir(t, pod)
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	p := e.waitPodRunning(t, pod.Name)
	if s := p.Status.InitContainerStatuses[0]; !ptr.Deref(s.Started, false) || s.State.Running == nil {
		t.Errorf("sidecar status = %+v, want running and started", s)
	}
	e.node.waitFor("the main container started", func() bool {
		b, _ := readFile(filepath.Join(dir, "log"))
		return strings.Contains(b, "main-start")
	})
	b, _ := readFile(filepath.Join(dir, "log"))
	if got := strings.Join(strings.Fields(b), ","); got != "sidecar-up,main-start" {
		t.Errorf("order on the host = %q, want sidecar-up before main-start", got)
	}
	e.deleteAndWait(t, pod.Name)
}
