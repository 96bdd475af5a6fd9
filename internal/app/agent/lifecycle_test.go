package agent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

// TestReadyThenStopLeavesPodsRunning: berth tells systemd READY=1 once it
// serves, and a stop (SIGTERM cancels Run's context) returns promptly
// without stopping the pod: its sandbox and container still run.
func TestReadyThenStopLeavesPodsRunning(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "")

	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}

	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()

	buf := make([]byte, 256)
	if err := notify.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := notify.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("systemd got %q, %v; want READY=1", buf[:n], err)
	}
	waitPod(t, port, "running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
			p.Status.ContainerStatuses[0].State.Running != nil
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(2 * stopBudget):
		t.Fatal("Run did not return after its context ended")
	}
	sandboxes, containers := fake.Sandboxes(), fake.Containers()
	if len(sandboxes) != 1 || sandboxes[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandboxes after stop: %v; want the pod's, ready", sandboxes)
	}
	if len(containers) != 1 || containers[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("containers after stop: %v; want the pod's, running", containers)
	}
}

// standalone returns the configuration of a standalone node on the fake
// runtime, with its static pod directory and read-only port.
func standalone(t *testing.T, fake *crifake.Fake) (*config.Config, string, int) {
	t.Helper()
	fake.AddImage("docker.io/library/busybox:1.36")
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cfg := &config.Config{NodeName: "node-a", RootDir: filepath.Join(dir, "root"), BerthFlags: config.BerthFlags{DevicePluginDir: filepath.Join(dir, "device-plugins")},
		PodInfraContainerImage: "registry.k8s.io/pause:3.10.1"}
	config.SetDefaults(&cfg.Kubelet)
	kc := &cfg.Kubelet
	kc.StaticPodPath = manifests
	kc.ContainerRuntimeEndpoint = fake.Endpoint(t)
	kc.PodLogsDir = filepath.Join(dir, "logs")
	kc.ReadOnlyPort = int32(port)
	kc.Address = "127.0.0.1"
	kc.HealthzPort = ptr.To[int32](0)
	kc.EnableServer = ptr.To(false) // the kubelet API's webhook auth needs an API client
	kc.ResolverConfig = ptr.To("")
	kc.FileCheckFrequency = metav1.Duration{Duration: time.Second}
	kc.FailCgroupV1 = ptr.To(false) // these tests run on cgroup v1 hosts too
	// The fake runtime makes no cgroups: leave the host's alone.
	kc.CgroupsPerQOS = ptr.To(false)
	kc.EnforceNodeAllocatable = []string{"none"}
	kc.MakeIPTablesUtilChains = ptr.To(false) // leave the host's iptables alone
	return cfg, manifests, port
}
