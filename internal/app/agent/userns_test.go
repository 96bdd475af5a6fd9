package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

const usernsManifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  hostUsers: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: docker.io/library/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: ["httpd", "-f"]
`

// runNode runs berth on cfg until the returned stop is called (or the
// test ends).
func runNode(t *testing.T, cfg *config.Config) (stop func()) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestUserNamespaceKeptAcrossRestarts: on a runtime that declares user
// namespace support, a hostUsers: false static pod runs in a user
// namespace of its own, in mode POD on the sandbox and the containers,
// with idmapped mounts; the mapping is in the pod's directory; a
// restarted berth adopts the pod and restarts its container with the
// same mapping; removing the pod removes it.
func TestUserNamespaceKeptAcrossRestarts(t *testing.T) {
	fake := crifake.New(clock.RealClock{})
	fake.SetRuntimeHandlers(true)
	cfg, manifests, port := standalone(t, fake)
	stop := runNode(t, cfg)
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(usernsManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, port, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	sandboxes := fake.Sandboxes()
	if len(sandboxes) != 1 {
		t.Fatalf("sandboxes: %v", sandboxes)
	}
	got := sandboxes[0].GetLinux().GetNamespaces().GetOptions().GetUsernsOptions()
	if got.GetMode() != runtimeapi.NamespaceMode_POD || len(got.GetUids()) != 1 || got.GetUids()[0].GetHostId() < 65536 {
		t.Fatalf("sandbox user namespace %v, want mode POD mapping IDs from 65536 up", got)
	}
	file := filepath.Join(cfg.RootDir, "pods", string(pod.UID), userns.MappingsFile)
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the mapping is not in the pod directory: %v", err)
	}
	want := string(userns.Encode(userns.Mapping{HostID: got.GetUids()[0].GetHostId(), Length: 65536}))
	if string(content) != want {
		t.Errorf("mappings file %s, want %s", content, want)
	}

	stop()
	runNode(t, cfg)
	pod = waitPod(t, port, "adopted", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	id := pod.Status.ContainerStatuses[0].ContainerID
	if err := fake.ExitContainer(id[strings.Index(id, "://")+3:], 1, "Error"); err != nil {
		t.Fatal(err)
	}
	waitPod(t, port, "restarted", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	if n := len(fake.Sandboxes()); n != 1 {
		t.Errorf("%d sandboxes after the restart, want the adopted one", n)
	}
	configs := fake.ContainerConfigs()
	last := configs[len(configs)-1]
	if diff := cmp.Diff(got, last.GetLinux().GetSecurityContext().GetNamespaceOptions().GetUsernsOptions(), protocmp.Transform()); diff != "" {
		t.Errorf("the container restarted by a restarted berth has another user namespace (-before +after):\n%s", diff)
	}
	for _, m := range last.GetMounts() {
		if diff := cmp.Diff(got.GetUids(), m.GetUidMappings(), protocmp.Transform()); diff != "" {
			t.Errorf("mount %s not idmapped with the pod's mapping (-want +got):\n%s", m.GetContainerPath(), diff)
		}
	}

	if err := os.Remove(filepath.Join(manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the runtime to be empty", func() bool { return len(fake.Sandboxes()) == 0 && len(fake.Containers()) == 0 })
	waitFor(t, "the mapping released", func() bool { _, err := os.Stat(file); return os.IsNotExist(err) })
}
