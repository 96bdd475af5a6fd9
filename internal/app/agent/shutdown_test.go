package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/node/nodeshutdown/logindfake"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

const shutdownManifest = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  priorityClassName: %s
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: docker.io/library/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: ["httpd", "-f"]
`

// TestGracefulNodeShutdown runs the node in process with a fake logind on a
// private system bus: berth takes the inhibitor lock; on
// PrepareForShutdown(true) the default-priority pod ends before the
// system-node-critical one, both with upstream's status, a new pod is
// refused, and the lock is released; a cancellation takes it again.
func TestGracefulNodeShutdown(t *testing.T) {
	addr := logindfake.StartBus(t)
	logind := logindfake.New(t, addr, time.Minute, t.TempDir())
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	t.Setenv("NOTIFY_SOCKET", "")

	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	cfg.Kubelet.ShutdownGracePeriod = metav1.Duration{Duration: 20 * time.Second}
	cfg.Kubelet.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: 10 * time.Second}
	for name, class := range map[string]string{"app": "", "critical": "system-node-critical"} {
		if err := os.WriteFile(filepath.Join(manifests, name+".yaml"), fmt.Appendf(nil, shutdownManifest, name, class), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	waitPods(t, port, "both running", func(pods map[string]corev1.Pod) bool {
		return len(pods) == 2 && pods["app-node-a"].Status.Phase == corev1.PodRunning && pods["critical-node-a"].Status.Phase == corev1.PodRunning
	})
	logind.WaitHeld(os.Getpid(), 1)

	logind.Prepare(true)
	pods := waitPods(t, port, "both ended", func(pods map[string]corev1.Pod) bool {
		return pods["app-node-a"].Status.Phase == corev1.PodFailed && pods["critical-node-a"].Status.Phase == corev1.PodFailed
	})
	for name, p := range pods {
		if p.Status.Reason != "Terminated" || p.Status.Message != "Pod was terminated in response to imminent node shutdown." {
			t.Errorf("%s: reason %q message %q; want upstream's node shutdown status", name, p.Status.Reason, p.Status.Message)
		}
	}
	logind.WaitHeld(os.Getpid(), 0)
	finished := map[string]int64{}
	for _, c := range fake.Containers() {
		finished[c.Labels["io.kubernetes.pod.name"]] = c.FinishedAt
	}
	if finished["app-node-a"] == 0 || finished["critical-node-a"] == 0 || finished["app-node-a"] > finished["critical-node-a"] {
		t.Errorf("containers finished at %v; want the app's before the critical pod's", finished)
	}

	if err := os.WriteFile(filepath.Join(manifests, "late.yaml"), fmt.Appendf(nil, shutdownManifest, "late", ""), 0o644); err != nil {
		t.Fatal(err)
	}
	pods = waitPods(t, port, "the late pod refused", func(pods map[string]corev1.Pod) bool {
		return pods["late-node-a"].Status.Reason == "NodeShutdown"
	})
	if got := pods["late-node-a"].Status.Message; got != "Pod was rejected: Pod was rejected as the node is shutting down." {
		t.Errorf("late pod message %q", got)
	}

	logind.Prepare(false)
	logind.WaitHeld(os.Getpid(), 1)
}

// waitPods polls the read-only /pods until cond holds for the pods by name.
func waitPods(t *testing.T, port int, what string, cond func(map[string]corev1.Pod) bool) map[string]corev1.Pod {
	t.Helper()
	var found map[string]corev1.Pod
	waitFor(t, what, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", port))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var list corev1.PodList
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			return false
		}
		found = map[string]corev1.Pod{}
		for _, p := range list.Items {
			found[p.Name] = p
		}
		return cond(found)
	})
	return found
}
