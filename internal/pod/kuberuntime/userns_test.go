package kuberuntime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/node/userns"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// usernsEnv is an env whose user namespace manager reads the runtime
// handlers from the fake runtime's Status, as the agent wires it.
func usernsEnv(t *testing.T, declare func(*env), starts *[]bool) *env {
	t.Helper()
	var e *env
	var mgr *userns.Manager
	e = newEnv(t, func(c *Config) {
		c.Observe.UserNamespacedPodStarted = func(failed bool) { *starts = append(*starts, failed) }
		dir := filepath.Join(filepath.Dir(c.PodsDir), "pods")
		if err := os.MkdirAll(filepath.Join(dir, "uid-1"), 0o750); err != nil {
			t.Fatal(err)
		}
		handlers := func() []cri.RuntimeHandler {
			info, err := (&cri.Client{Runtime: c.Runtime}).Status(context.Background())
			if err != nil {
				t.Errorf("Status: %v", err)
			}
			return info.Handlers
		}
		var err error
		if mgr, err = userns.New(context.Background(), userns.Config{PodsDir: dir, MaxPods: 110,
			Range: userns.Range{First: 65536, Length: 65536 * 110}, Handlers: handlers, Pick: func(int) int { return 1 }}); err != nil {
			t.Fatal(err)
		}
		c.UserNamespaces = mgr
	})
	declare(e)
	e.fake.AddImage("busybox:1.36")
	return e
}

func TestHostUsersFalseRefusedWithoutRuntimeSupport(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{name: "runtime reports no handlers (containerd 1.6)", env: func(t *testing.T) *env { return usernsEnv(t, func(*env) {}, new([]bool)) }},
		{name: "handler without user namespaces", env: func(t *testing.T) *env {
			return usernsEnv(t, func(e *env) { e.fake.SetRuntimeHandlers(false) }, new([]bool))
		}},
		{name: "no user namespace manager", env: func(t *testing.T) *env {
			e := newEnv(t)
			e.fake.SetRuntimeHandlers(true)
			e.fake.AddImage("busybox:1.36")
			return e
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			pod := basePod()
			pod.Spec.HostUsers = new(false)
			_, err := e.apply(pod, e.status(pod), nil, nil)
			const msg = "can't set `spec.hostUsers: false`, runtime does not support user namespaces"
			if err == nil || err.Error() != "create pod sandbox: "+msg {
				t.Errorf("Apply error %v, want the refusal", err)
			}
			if want := []string{"Warning FailedCreatePodSandBox Failed to create pod sandbox: " + msg}; !slices.Equal(e.events.take(), want) {
				t.Errorf("events, want %q", want)
			}
			for _, call := range e.fake.Calls() {
				if call == "RunPodSandbox" || call == "CreateContainer" || call == "PullImage" {
					t.Errorf("a refused pod reached %s", call)
				}
			}
		})
	}
}

func TestHostUsersFalseRunsInItsOwnUserNamespace(t *testing.T) {
	var starts []bool
	e := usernsEnv(t, func(e *env) { e.fake.SetRuntimeHandlers(true) }, &starts)
	pod := basePod()
	pod.Spec.HostUsers = new(false)
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	// Slot 1 of a range from 65536: host IDs 131072 to 196607.
	want := &runtimeapi.UserNamespace{
		Mode: runtimeapi.NamespaceMode_POD,
		Uids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
		Gids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
	}
	sandboxes := e.fake.Sandboxes()
	if len(sandboxes) != 1 {
		t.Fatalf("sandboxes: %v", sandboxes)
	}
	if diff := cmp.Diff(want, sandboxes[0].GetLinux().GetNamespaces().GetOptions().GetUsernsOptions(), protocmp.Transform()); diff != "" {
		t.Errorf("sandbox user namespace (-want +got):\n%s", diff)
	}
	configs := e.fake.ContainerConfigs()
	if len(configs) != 1 {
		t.Fatalf("containers: %v", configs)
	}
	if diff := cmp.Diff(want, configs[0].GetLinux().GetSecurityContext().GetNamespaceOptions().GetUsernsOptions(), protocmp.Transform()); diff != "" {
		t.Errorf("container user namespace (-want +got):\n%s", diff)
	}
	if len(configs[0].GetMounts()) == 0 {
		t.Fatal("the container has no mounts")
	}
	for _, m := range configs[0].GetMounts() {
		if diff := cmp.Diff(want.Uids, m.GetUidMappings(), protocmp.Transform()); diff != "" {
			t.Errorf("mount %s uid mappings (-want +got):\n%s", m.GetContainerPath(), diff)
		}
		if diff := cmp.Diff(want.Gids, m.GetGidMappings(), protocmp.Transform()); diff != "" {
			t.Errorf("mount %s gid mappings (-want +got):\n%s", m.GetContainerPath(), diff)
		}
	}
	if _, err := os.Stat(filepath.Join(e.pods, "uid-1", userns.MappingsFile)); err != nil {
		t.Errorf("the mapping was not persisted: %v", err)
	}
	if diff := cmp.Diff([]bool{false}, starts); diff != "" {
		t.Errorf("user namespaced pod starts (failed?) (-want +got):\n%s", diff)
	}
}

// TestUserNamespacedPodStartsCounted: each apply that creates the sandbox
// of a hostUsers: false pod is counted, failed when refused, as upstream's
// SyncPod counts it; a pod in the host's user namespace is not.
func TestUserNamespacedPodStartsCounted(t *testing.T) {
	var starts []bool
	e := usernsEnv(t, func(*env) {}, &starts)
	host := basePod()
	if f := e.sync(host); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	pod := basePod()
	pod.ObjectMeta.UID, pod.Name = "uid-2", "web2"
	pod.Spec.HostUsers = new(false)
	for range 2 {
		if _, err := e.apply(pod, e.status(pod), nil, nil); err == nil {
			t.Fatal("a hostUsers: false pod ran on a runtime without user namespaces")
		}
	}
	if diff := cmp.Diff([]bool{true, true}, starts); diff != "" {
		t.Errorf("user namespaced pod starts (failed?) (-want +got):\n%s", diff)
	}
}

func TestHostUsersUnsetRunsInTheNodeUserNamespace(t *testing.T) {
	e := usernsEnv(t, func(e *env) { e.fake.SetRuntimeHandlers(true) }, new([]bool))
	pod := basePod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	want := &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}
	if diff := cmp.Diff(want, e.fake.Sandboxes()[0].GetLinux().GetNamespaces().GetOptions().GetUsernsOptions(), protocmp.Transform()); diff != "" {
		t.Errorf("sandbox user namespace (-want +got):\n%s", diff)
	}
	for _, m := range e.fake.ContainerConfigs()[0].GetMounts() {
		if len(m.GetUidMappings()) != 0 || len(m.GetGidMappings()) != 0 {
			t.Errorf("mount %s idmapped in the node's user namespace", m.GetContainerPath())
		}
	}
	if _, err := os.Stat(filepath.Join(e.pods, "uid-1", userns.MappingsFile)); !os.IsNotExist(err) {
		t.Errorf("a mappings file for a pod in the node's user namespace: %v", err)
	}
}
