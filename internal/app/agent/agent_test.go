package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: docker.io/library/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: ["httpd", "-f"]
`

// TestRunAgainstFakeRuntime runs the whole node in process against the
// in-memory CRI: a static pod runs, a dead container is restarted, and a
// removed manifest removes the pod from the runtime.
func TestRunAgainstFakeRuntime(t *testing.T) {
	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)

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

	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, port, "running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].State.Running != nil
	})
	if pod.Name != "web-node-a" || pod.Status.PodIP == "" {
		t.Errorf("pod %s has IP %q; want web-node-a with an IP", pod.Name, pod.Status.PodIP)
	}

	first := pod.Status.ContainerStatuses[0].ContainerID
	if err := fake.ExitContainer(first[strings.Index(first, "://")+3:], 1, "Error"); err != nil {
		t.Fatal(err)
	}
	pod = waitPod(t, port, "restarted", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	last := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 1 || last.ContainerID != first {
		t.Errorf("lastState = %+v; want exit 1 of %s", last, first)
	}

	if err := os.Remove(filepath.Join(manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the runtime to be empty", func() bool {
		return len(fake.Sandboxes()) == 0 && len(fake.Containers()) == 0
	})
}

func waitPod(t *testing.T, port int, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	waitFor(t, "pod "+what, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", port))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var list corev1.PodList
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Items) != 1 {
			return false
		}
		found = &list.Items[0]
		return cond(found)
	})
	return found
}

// waitFor polls cond; the bound only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
