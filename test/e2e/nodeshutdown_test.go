package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/node/nodeshutdown/logindfake"
)

// TestGracefulNodeShutdown joins berth to a real control plane with a fake
// logind on a private system bus (DBUS_SYSTEM_BUS_ADDRESS): berth takes
// the inhibitor lock; on PrepareForShutdown(true) the Node goes NotReady,
// the default-priority pod ends before the system-node-critical one (which
// is only killed once the first has finished), both report upstream's
// status, and the lock is released.
func TestGracefulNodeShutdown(t *testing.T) {
	env := startClusterEnv(t)
	addr := logindfake.StartBus(t)
	logind := logindfake.New(t, addr, time.Minute, t.TempDir())
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	f, err := os.OpenFile(env.node.config, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\nshutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n")
	must(t, err)
	must(t, f.Close())
	env.node.start()
	pid := env.node.cmd.Process.Pid
	logind.WaitHeld(pid, 1)

	ctx := context.Background()
	for _, ns := range []string{"default", "kube-system"} {
		env.waitAPI(t, ns+" service account", func(ctx context.Context) (bool, error) {
			_, err := env.admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		})
	}
	// The low pod takes 3s to stop on SIGTERM; the critical one stops at once.
	low := shutdownPod("low", "default", "", "trap 'sleep 3; exit 0' TERM; while true; do sleep 1; done")
	critical := shutdownPod("critical", "kube-system", "system-node-critical", "trap 'exit 0' TERM; while true; do sleep 1; done")
	for _, p := range []*corev1.Pod{low, critical} {
		_, err := env.admin.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
	}
	for _, p := range []*corev1.Pod{low, critical} {
		env.waitAPI(t, "pod "+p.Name+" running", func(ctx context.Context) (bool, error) {
			got, err := env.admin.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			return err == nil && running(got), err
		})
	}

	logind.Prepare(true)
	env.waitAPI(t, "node NotReady: shutting down", func(ctx context.Context) (bool, error) {
		n, err := env.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionFalse && c.Message == "node is shutting down", nil
			}
		}
		return false, nil
	})
	ended := map[string]*corev1.Pod{}
	for _, p := range []*corev1.Pod{low, critical} {
		env.waitAPI(t, "pod "+p.Name+" ended by the shutdown", func(ctx context.Context) (bool, error) {
			got, err := env.admin.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			ended[p.Name] = got
			cs := got.Status.ContainerStatuses
			return got.Status.Phase == corev1.PodFailed && len(cs) == 1 && cs[0].State.Terminated != nil, nil
		})
		st := ended[p.Name].Status
		if st.Reason != "Terminated" || st.Message != "Pod was terminated in response to imminent node shutdown." {
			t.Errorf("%s: reason %q message %q; want upstream's node shutdown status", p.Name, st.Reason, st.Message)
		}
		if !hasCondition(ended[p.Name], corev1.DisruptionTarget, corev1.ConditionTrue) {
			t.Errorf("%s: no True DisruptionTarget condition: %v", p.Name, st.Conditions)
		}
	}
	lowDone := ended["low"].Status.ContainerStatuses[0].State.Terminated.FinishedAt
	criticalDone := ended["critical"].Status.ContainerStatuses[0].State.Terminated.FinishedAt
	if criticalDone.Before(&lowDone) {
		t.Errorf("critical pod finished at %v, before the low-priority pod (%v)", criticalDone, lowDone)
	}
	logind.WaitHeld(pid, 0)
}

func shutdownPod(name, namespace, class, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			PriorityClassName:             class,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", script},
			}},
		},
	}
}
