package devicemanager

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
)

// TestRestartRestores: a new manager on the same directory (berth
// restarted) holds every assignment from the checkpoint; the resource
// waits at capacity 0 for its plugin; a running container is admitted
// again with its devices before the plugin is back, and its options are
// the plugin's first answer; the plugin registers again and serves.
func TestRestartRestores(t *testing.T) {
	dir := shortDir(t)
	h := newHarness(t, dir, nil)
	h.run()
	p := startPlugin(t, dir, "dev.sock", nil)
	if err := h.register(p, testResource); err != nil {
		t.Fatal(err)
	}
	p.devices <- devices(pluginapi.Healthy, "a", "b")
	h.waitCapacity(2, 2)
	pd := pod("p1", map[string]int64{"app": 1})
	h.setActive(pd)
	if ok, _, msg := h.m.Admit(t.Context(), pd); !ok {
		t.Fatal(msg)
	}
	before := h.m.GetDevices("p1", "app")
	opts, err := h.m.ContainerOptions(t.Context(), pd, &pd.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	h.stop()
	p.stop()

	// Every source is seen already: the running container keeps the
	// devices it holds all the same.
	again := newHarness(t, dir, map[string]sets.Set[string]{"p1": sets.New("app")})
	again.setActive(pd)
	if d := cmp.Diff(before, again.m.GetDevices("p1", "app")); d != "" {
		t.Errorf("devices after restart (-before +after):\n%s", d)
	}
	again.waitCapacity(0, 0)
	if ok, reason, msg := again.m.Admit(t.Context(), pd); !ok {
		t.Fatalf("Admit of the running pod after restart = %s %s", reason, msg)
	}
	got, err := again.m.ContainerOptions(t.Context(), pd, &pd.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(opts, got, protocmp.Transform()); d != "" {
		t.Errorf("container options after restart (-before +after):\n%s", d)
	}
	if len(p.allocations()) != 1 {
		t.Errorf("Allocate calls = %v, want only the first", p.allocations())
	}

	again.run()
	back := startPlugin(t, dir, "dev2.sock", nil)
	if err := again.register(back, testResource); err != nil {
		t.Fatal(err)
	}
	back.devices <- devices(pluginapi.Healthy, "a", "b")
	again.waitCapacity(2, 2)
	other := pod("p2", map[string]int64{"app": 2})
	if ok, _, _ := again.m.Admit(t.Context(), other); ok {
		t.Error("a pod asking for both devices was admitted while the restored pod holds one")
	}
}

// TestPluginResources: a pod holding devices is checked against an
// allocatable of at least the devices given out; others see the node.
func TestPluginResources(t *testing.T) {
	h, _ := servedHarness(t, nil, "a", "b")
	pd := pod("p1", map[string]int64{"app": 2})
	h.setActive(pd)
	if ok, _, msg := h.m.Admit(t.Context(), pd); !ok {
		t.Fatal(msg)
	}
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{testResource: resource.MustParse("0")}}}
	got := h.m.PluginResources(pd, node)
	if q := got.Status.Allocatable[testResource]; q.Value() != 2 {
		t.Errorf("allocatable for the holding pod = %v, want 2", q.String())
	}
	if q := node.Status.Allocatable[testResource]; q.Value() != 0 {
		t.Error("PluginResources modified the node it was given")
	}
	if got := h.m.PluginResources(pod("p2", map[string]int64{"app": 1}), node); got != node {
		t.Error("a pod without devices got another node")
	}
}

// TestRestartKeepsUnseenPods: after a restart, admitting the first pod
// frees nothing of a pod that ran at start and is not admitted yet.
func TestRestartKeepsUnseenPods(t *testing.T) {
	dir := shortDir(t)
	h, _ := servedHarnessIn(t, dir, "a", "b")
	first, second := pod("p1", map[string]int64{"app": 1}), pod("p2", map[string]int64{"app": 1})
	for _, p := range []*corev1.Pod{first, second} {
		if ok, _, msg := h.m.Admit(t.Context(), p); !ok {
			t.Fatal(msg)
		}
	}
	h.stop()
	again := newHarness(t, dir, map[string]sets.Set[string]{"p1": sets.New("app"), "p2": sets.New("app")})
	again.m.RemoveStale(t.Context(), first, nil)
	if ok, _, msg := again.m.Admit(t.Context(), first); !ok {
		t.Fatal(msg)
	}
	if got := again.m.GetDevices("p2", "app"); len(got[testResource]) != 1 {
		t.Fatalf("the second pod lost its device when the first was admitted: %v", got)
	}
	again.m.RemoveStale(t.Context(), second, []*corev1.Pod{first})
	if ok, _, msg := again.m.Admit(t.Context(), second); !ok {
		t.Errorf("Admit(second) after restart: %s", msg)
	}
	// Once seen, a pod no longer active is freed as any other.
	again.m.RemoveStale(t.Context(), pod("p3", nil), []*corev1.Pod{second})
	if got := again.m.GetDevices("p1", "app"); got != nil {
		t.Errorf("the first pod, seen and no longer active, still holds %v", got)
	}
}

// The Node's extended resources are reset when the device plugin directory
// held nothing at start (missing or empty), never when a device manager
// left something there (its checkpoint, or the socket of one killed).
func TestShouldResetExtendedResourceCapacity(t *testing.T) {
	dir := shortDir(t)
	if !newHarness(t, filepath.Join(dir, "missing"), nil).m.ShouldResetExtendedResourceCapacity() {
		t.Error("a missing directory: no reset")
	}
	if !newHarness(t, dir, nil).m.ShouldResetExtendedResourceCapacity() {
		t.Error("an empty directory: no reset")
	}
	if err := checkpoint.Write(dir, checkpoint.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	if newHarness(t, dir, nil).m.ShouldResetExtendedResourceCapacity() {
		t.Error("a directory with a checkpoint: a reset")
	}
	stale := shortDir(t)
	if err := os.WriteFile(filepath.Join(stale, SocketName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if newHarness(t, stale, nil).m.ShouldResetExtendedResourceCapacity() {
		t.Error("a directory with a stale socket: a reset")
	}
}
