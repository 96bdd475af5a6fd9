package critest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Env is what the suite needs from a runtime under test.
type Env struct {
	// Client talks to the runtime.
	Client *cri.Client
	// Image is a present busybox image ref, e.g.
	// "docker.io/library/busybox:1.36"; its sh runs the test commands.
	Image string
	// SandboxImage is the pause image the runtime uses for sandboxes,
	// e.g. "registry.k8s.io/pause:3.10.1". It must be present. Empty skips
	// that check.
	SandboxImage string
	// LogDir is a directory the suite may create pod log directories in.
	LogDir string
	// Exit, if set, makes a running container's process exit with code: the
	// fake has no processes. When nil, the container's own command
	// ("sh -c 'exit N'") exits and the suite polls ContainerStatus.
	Exit func(id string, code int32) error
	// ExitWait bounds that polling; zero means 30 seconds.
	ExitWait time.Duration
}

// RunSuite runs the CRI behaviour suite against env.
func RunSuite(t *testing.T, env Env) {
	if env.ExitWait == 0 {
		env.ExitWait = 30 * time.Second
	}
	s := &suite{Env: env}
	t.Run("Verify", s.testVerify)
	t.Run("Images", s.testImages)
	t.Run("NotFound", s.testNotFound)
	t.Run("SandboxLifecycle", s.testSandboxLifecycle)
	t.Run("SandboxListFilters", s.testSandboxListFilters)
	t.Run("PodNetwork", s.testPodNetwork)
	t.Run("ContainerLifecycle", s.testContainerLifecycle)
	t.Run("ContainerListFilters", s.testContainerListFilters)
	t.Run("ContainerExits", s.testContainerExits)
	t.Run("CreateContainerRefusals", s.testCreateContainerRefusals)
	t.Run("DuplicateNames", s.testDuplicateNames)
	t.Run("UpdateResources", s.testUpdateResources)
	t.Run("RemoveSandboxRemovesContainers", s.testRemoveSandboxRemovesContainers)
	t.Run("ReopenContainerLog", s.testReopenContainerLog)
}

// suite carries the environment through the subtests.
type suite struct {
	Env
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// randomSuffix keeps names and UIDs unique across runs against a real
// runtime that may keep leftovers of an earlier, interrupted run.
func randomSuffix(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("read random bytes: %v", err)
	}
	return hex.EncodeToString(b)
}

// sandboxOpts shapes a test sandbox.
type sandboxOpts struct {
	podNetwork bool
	labels     map[string]string
}

// sandboxConfig returns the config of a fresh sandbox, host network unless
// asked otherwise (a runtime without CNI cannot set up a pod network).
func (s *suite) sandboxConfig(t *testing.T, o sandboxOpts) *runtimeapi.PodSandboxConfig {
	suffix := randomSuffix(t)
	uid := "uid-" + suffix
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if o.podNetwork {
		ns.Network = runtimeapi.NamespaceMode_POD
	}
	logDir := filepath.Join(s.LogDir, "critest_pod-"+suffix+"_"+uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatalf("create pod log directory: %v", err)
	}
	labels := map[string]string{"berth.test/suite": "critest", "berth.test/pod": "pod-" + suffix}
	for k, v := range o.labels {
		labels[k] = v
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "pod-" + suffix, Uid: uid, Namespace: "critest", Attempt: 0},
		LogDirectory: logDir,
		Labels:       labels,
		Annotations:  map[string]string{"berth.test/annotation": "sandbox"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: ns},
		},
	}
	if o.podNetwork {
		// A host-network sandbox shares the node's UTS namespace: setting
		// its hostname fails.
		cfg.Hostname = "pod-" + suffix
	}
	return cfg
}

// runSandbox creates a sandbox and removes it at cleanup.
func (s *suite) runSandbox(t *testing.T, ctx context.Context, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	resp, err := s.Client.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	id := resp.GetPodSandboxId()
	if id == "" {
		t.Fatal("RunPodSandbox returned an empty ID")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.Client.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Errorf("cleanup: RemovePodSandbox %s: %v", id, err)
		}
	})
	return id
}

// containerConfig returns a container running sh -c script in the image.
func (s *suite) containerConfig(t *testing.T, sb *runtimeapi.PodSandboxConfig, name, script string) *runtimeapi.ContainerConfig {
	if err := os.MkdirAll(filepath.Join(sb.GetLogDirectory(), name), 0o755); err != nil {
		t.Fatalf("create container log directory: %v", err)
	}
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: name},
		Image:       &runtimeapi.ImageSpec{Image: s.Image},
		Command:     []string{"sh", "-c", script},
		LogPath:     filepath.Join(name, "0.log"),
		Labels:      map[string]string{"berth.test/container": name, "berth.test/pod": sb.GetLabels()["berth.test/pod"]},
		Annotations: map[string]string{"berth.test/annotation": "container"},
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: sb.GetLinux().GetSecurityContext().GetNamespaceOptions(),
			},
		},
	}
}

// createContainer creates a container in the sandbox.
func (s *suite) createContainer(t *testing.T, ctx context.Context, sandboxID string, sb *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	resp, err := s.Client.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sandboxID, Config: cfg, SandboxConfig: sb,
	})
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", cfg.GetMetadata().GetName(), err)
	}
	return resp.GetContainerId()
}

func (s *suite) startContainer(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := s.Client.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer %s: %v", id, err)
	}
}

func (s *suite) containerStatus(t *testing.T, ctx context.Context, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := s.Client.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return resp.GetStatus()
}

func (s *suite) sandboxStatus(t *testing.T, ctx context.Context, id string) *runtimeapi.PodSandboxStatus {
	t.Helper()
	resp, err := s.Client.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		t.Fatalf("PodSandboxStatus %s: %v", id, err)
	}
	return resp.GetStatus()
}

// waitExited waits, within ExitWait, until the container has exited.
func (s *suite) waitExited(t *testing.T, ctx context.Context, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(s.ExitWait)
	for {
		st := s.containerStatus(t, ctx, id)
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s still %s after %v", id, st.GetState(), s.ExitWait)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("wait for container %s to exit: %v", id, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
