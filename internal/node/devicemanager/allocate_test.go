package devicemanager

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// servedHarness is a running manager with one plugin of testResource
// serving the devices ids.
func servedHarness(t *testing.T, opts *pluginapi.DevicePluginOptions, ids ...string) (*harness, *fakePlugin) {
	t.Helper()
	return servedHarnessWith(t, shortDir(t), opts, ids...)
}

// servedHarnessIn is servedHarness in dir.
func servedHarnessIn(t *testing.T, dir string, ids ...string) (*harness, *fakePlugin) {
	t.Helper()
	return servedHarnessWith(t, dir, nil, ids...)
}

func servedHarnessWith(t *testing.T, dir string, opts *pluginapi.DevicePluginOptions, ids ...string) (*harness, *fakePlugin) {
	t.Helper()
	h := newHarness(t, dir, nil)
	h.run()
	p := startPlugin(t, dir, "dev.sock", opts)
	if err := h.register(p, testResource); err != nil {
		t.Fatal(err)
	}
	p.devices <- devices(pluginapi.Healthy, ids...)
	h.waitCapacity(int64(len(ids)), int64(len(ids)))
	return h, p
}

// TestAdmitPastCapacity: a pod asking for more devices than are free is
// refused with upstream's reason and message.
func TestAdmitPastCapacity(t *testing.T) {
	h, _ := servedHarness(t, nil, "a", "b")
	first := pod("p1", map[string]int64{"app": 1})
	h.setActive(first)
	if ok, reason, msg := h.m.Admit(t.Context(), first); !ok {
		t.Fatalf("Admit(first) = %s %s", reason, msg)
	}
	second := pod("p2", map[string]int64{"app": 2})
	ok, reason, msg := h.m.Admit(t.Context(), second)
	want := "Allocate failed due to requested number of devices unavailable for example.com/dev. Requested: 2, Available: 1, which is unexpected"
	if ok || reason != "UnexpectedAdmissionError" || msg != want {
		t.Errorf("Admit(second) = %v %q %q, want false UnexpectedAdmissionError %q", ok, reason, msg, want)
	}
}

// TestInactivePodsFreed: once a pod is no longer among the pods
// admission admits against, its devices go to the next pod admitted
// (sources ready); a pod admitted earlier (of the same batch, not desired
// yet) keeps them, and before the sources are ready nothing is freed.
func TestInactivePodsFreed(t *testing.T) {
	h, _ := servedHarness(t, nil, "a", "b")
	first := pod("p1", map[string]int64{"app": 2})
	if ok, _, msg := h.m.Admit(t.Context(), first); !ok {
		t.Fatal(msg)
	}
	second := pod("p2", map[string]int64{"app": 2})
	h.mu.Lock()
	h.ready = false
	h.mu.Unlock()
	h.m.RemoveStale(t.Context(), second, nil)
	if ok, _, _ := h.m.Admit(t.Context(), second); ok {
		t.Fatal("Admit(second) succeeded before the sources were ready: the first pod's devices were freed")
	}
	h.mu.Lock()
	h.ready = true
	h.mu.Unlock()
	h.m.RemoveStale(t.Context(), second, []*corev1.Pod{first})
	if ok, _, _ := h.m.Admit(t.Context(), second); ok {
		t.Fatal("Admit(second) succeeded while the first pod is active")
	}
	h.m.RemoveStale(t.Context(), second, nil)
	if ok, _, msg := h.m.Admit(t.Context(), second); !ok {
		t.Fatalf("Admit(second) after the first pod ended: %s", msg)
	}
	if got := h.m.GetDevices("p1", "app"); got != nil {
		t.Errorf("the ended pod still holds %v", got)
	}
	if got := h.m.GetDevices("p2", "app")[testResource]; len(got) != 2 {
		t.Errorf("second pod holds %v, want 2 devices", got)
	}
}

// TestInitContainerDevicesReused: an init container's devices go to the
// app containers after it; a sidecar keeps its own.
func TestInitContainerDevicesReused(t *testing.T) {
	h, p := servedHarness(t, nil, "a", "b")
	pd := pod("p1", map[string]int64{"init": 2, "app": 2}, "init")
	h.setActive(pd)
	if ok, _, msg := h.m.Admit(t.Context(), pd); !ok {
		t.Fatalf("Admit: %s", msg)
	}
	initDevs, appDevs := h.m.GetDevices("p1", "init")[testResource], h.m.GetDevices("p1", "app")[testResource]
	if d := cmp.Diff(initDevs, appDevs); d != "" || len(appDevs) != 2 {
		t.Errorf("app container's devices differ from the init container's (-init +app):\n%s", d)
	}
	if got := len(p.allocations()); got != 2 {
		t.Errorf("%d Allocate calls, want one per container", got)
	}

	always := pod("p2", map[string]int64{"sidecar": 1, "app": 1}, "sidecar")
	policy := "Always"
	always.Spec.InitContainers[0].RestartPolicy = (*corev1.ContainerRestartPolicy)(&policy)
	h2, _ := servedHarness(t, nil, "a", "b")
	h2.setActive(always)
	if ok, _, msg := h2.m.Admit(t.Context(), always); !ok {
		t.Fatalf("Admit(sidecar pod): %s", msg)
	}
	s, a := h2.m.GetDevices("p2", "sidecar")[testResource], h2.m.GetDevices("p2", "app")[testResource]
	if len(s) != 1 || len(a) != 1 || s[0].ID == a[0].ID {
		t.Errorf("sidecar holds %v and app %v: want a device each, not shared", s, a)
	}
}

// TestContainerOptions: the plugin's Allocate response becomes the CRI
// options; PreStartContainer is called first when the plugin asks, and
// its preferred allocation is taken.
func TestContainerOptions(t *testing.T) {
	h, p := servedHarness(t, &pluginapi.DevicePluginOptions{PreStartRequired: true, GetPreferredAllocationAvailable: true}, "a", "b", "c")
	p.preferred = []string{"c"}
	p.response = &pluginapi.ContainerAllocateResponse{
		Envs:        map[string]string{"B": "2", "A": "1"},
		Mounts:      []*pluginapi.Mount{{ContainerPath: "/dev-info", HostPath: "/tmp/info", ReadOnly: true}},
		Devices:     []*pluginapi.DeviceSpec{{ContainerPath: "/dev/x", HostPath: "/dev/null", Permissions: "rw"}},
		Annotations: map[string]string{"example.com/note": "yes"},
		CdiDevices:  []*pluginapi.CDIDevice{{Name: "example.com/dev=c"}},
	}
	pd := pod("p1", map[string]int64{"app": 1})
	h.setActive(pd)
	if ok, _, msg := h.m.Admit(t.Context(), pd); !ok {
		t.Fatal(msg)
	}
	if got := h.m.GetDevices("p1", "app")[testResource]; len(got) != 1 || got[0].ID != "c" {
		t.Errorf("container holds %v, want the preferred device c", got)
	}
	opts, err := h.m.ContainerOptions(context.Background(), pd, &pd.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	want := ContainerOptions{
		Envs:        []*runtimeapi.KeyValue{{Key: "A", Value: []byte("1")}, {Key: "B", Value: []byte("2")}},
		Mounts:      []*runtimeapi.Mount{{ContainerPath: "/dev-info", HostPath: "/tmp/info", Readonly: true}},
		Devices:     []*runtimeapi.Device{{ContainerPath: "/dev/x", HostPath: "/dev/null", Permissions: "rw"}},
		Annotations: map[string]string{"example.com/note": "yes"},
		CDIDevices:  []*runtimeapi.CDIDevice{{Name: "example.com/dev=c"}},
	}
	if d := cmp.Diff(want, opts, protocmp.Transform()); d != "" {
		t.Errorf("ContainerOptions (-want +got):\n%s", d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := cmp.Diff([][]string{{"c"}}, p.preStarts); d != "" {
		t.Errorf("PreStartContainer calls (-want +got):\n%s", d)
	}
}
