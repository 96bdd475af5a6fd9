package devicemanager

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
)

func TestValidateRegistration(t *testing.T) {
	for _, tt := range []struct {
		name, version, resource, err string
	}{
		{name: "extended resource", version: "v1beta1", resource: "example.com/gpu"},
		{name: "old API version", version: "v1alpha", resource: "example.com/gpu",
			err: `requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]`},
		{name: "no domain", version: "v1beta1", resource: "gpu", err: `the ResourceName "gpu" is invalid`},
		{name: "kubernetes.io namespace", version: "v1beta1", resource: "kubernetes.io/gpu", err: `the ResourceName "kubernetes.io/gpu" is invalid`},
		{name: "requests prefix", version: "v1beta1", resource: "requests.example.com/gpu", err: `the ResourceName "requests.example.com/gpu" is invalid`},
		{name: "two slashes", version: "v1beta1", resource: "example.com/a/b", err: `the ResourceName "example.com/a/b" is invalid`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRegistration(&pluginapi.RegisterRequest{Version: tt.version, ResourceName: tt.resource, Endpoint: "x.sock"})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.err {
				t.Errorf("ValidateRegistration = %q, want %q", got, tt.err)
			}
		})
	}
}

// TestStaleSocketsRemoved: Run removes the sockets a previous berth and
// its plugins left, and nothing else.
func TestStaleSocketsRemoved(t *testing.T) {
	dir := shortDir(t)
	ln, err := net.Listen("unix", filepath.Join(dir, "old.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	for _, f := range []string{"notes.txt", checkpoint.FileName} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, dir, nil)
	h.run()
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "kubelet.sock kubelet_internal_checkpoint notes.txt sub"; got != want {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

// TestListAndWatch: a registered plugin's devices become capacity (all)
// and allocatable (the healthy ones), and each change tells node status.
func TestListAndWatch(t *testing.T) {
	dir := shortDir(t)
	h := newHarness(t, dir, nil)
	h.run()
	p := startPlugin(t, dir, "dev.sock", nil)
	if err := h.register(p, testResource); err != nil {
		t.Fatalf("Register: %v", err)
	}
	p.devices <- devices(pluginapi.Healthy, "a", "b")
	h.waitCapacity(2, 2)
	select {
	case <-h.kicks:
	case <-time.After(5 * time.Second):
		t.Fatal("no node status update after the devices came")
	}
	p.devices <- append(devices(pluginapi.Healthy, "a"), devices(pluginapi.Unhealthy, "b")...)
	h.waitCapacity(2, 1)
	if got := h.m.GetAllocatableDevices()[testResource]; len(got) != 1 || got[0].ID != "a" {
		t.Errorf("GetAllocatableDevices = %v, want device a", got)
	}
}

// TestRegistrationRefused: a bad request is refused with upstream's text
// and a second plugin on a socket still connected is refused too.
func TestRegistrationRefused(t *testing.T) {
	dir := shortDir(t)
	h := newHarness(t, dir, nil)
	h.run()
	p := startPlugin(t, dir, "dev.sock", nil)
	if err := h.register(p, "kubernetes.io/dev"); err == nil || !strings.Contains(err.Error(), `the ResourceName "kubernetes.io/dev" is invalid`) {
		t.Errorf("Register(kubernetes.io/dev) = %v, want the invalid name error", err)
	}
	if err := h.register(p, testResource); err != nil {
		t.Fatal(err)
	}
	if err := h.register(p, testResource); err == nil || !strings.Contains(err.Error(), "device plugin already connected: "+p.socket) {
		t.Errorf("second Register on the same socket = %v, want already connected", err)
	}
}

// TestPluginGone: when the plugin goes, its devices leave allocatable and
// stay in capacity for the grace period, then the resource is removed.
func TestPluginGone(t *testing.T) {
	dir := shortDir(t)
	h := newHarness(t, dir, nil)
	h.run()
	p := startPlugin(t, dir, "dev.sock", nil)
	if err := h.register(p, testResource); err != nil {
		t.Fatal(err)
	}
	p.devices <- devices(pluginapi.Healthy, "a", "b")
	h.waitCapacity(2, 2)
	p.stop()
	h.waitCapacity(2, 0)
	h.clock.Step(endpointStopGracePeriod)
	h.waitCapacity(2, 0)
	h.clock.Step(time.Second)
	_, _, removed := h.m.Capacity(t.Context())
	if len(removed) != 1 || removed[0] != testResource {
		t.Errorf("removed = %v, want [%s] past the grace period", removed, testResource)
	}
	h.waitCapacity(-1, -1)
}

// TestSecondRegistrationReplaces: a plugin registering the same resource
// on another socket takes over: it gets the next Allocate, and when the
// first goes the resource stays served.
func TestSecondRegistrationReplaces(t *testing.T) {
	dir := shortDir(t)
	h := newHarness(t, dir, nil)
	h.run()
	first := startPlugin(t, dir, "first.sock", nil)
	if err := h.register(first, testResource); err != nil {
		t.Fatal(err)
	}
	first.devices <- devices(pluginapi.Healthy, "a")
	h.waitCapacity(1, 1)
	second := startPlugin(t, dir, "second.sock", nil)
	if err := h.register(second, testResource); err != nil {
		t.Fatal(err)
	}
	second.devices <- devices(pluginapi.Healthy, "a", "b")
	h.waitCapacity(2, 2)
	first.stop()
	time.Sleep(50 * time.Millisecond)
	h.waitCapacity(2, 2)
	p := pod("p1", map[string]int64{"app": 1})
	h.setActive(p)
	if ok, reason, msg := h.m.Admit(t.Context(), p); !ok {
		t.Fatalf("Admit = %s %s", reason, msg)
	}
	if len(first.allocations()) != 0 || len(second.allocations()) != 1 {
		t.Errorf("Allocate calls: first %v, second %v; want one, to the second", first.allocations(), second.allocations())
	}
}

// TestResourceHealth: a container's devices show the health the plugin
// last listed.
func TestResourceHealth(t *testing.T) {
	h, p := servedHarness(t, nil, "a", "b")
	pd := pod("p1", map[string]int64{"app": 2})
	h.setActive(pd)
	if ok, _, msg := h.m.Admit(t.Context(), pd); !ok {
		t.Fatal(msg)
	}
	p.devices <- append(devices(pluginapi.Healthy, "a"), devices(pluginapi.Unhealthy, "b")...)
	h.waitCapacity(2, 1)
	select {
	case uid := <-h.m.Updates():
		if uid != "p1" {
			t.Errorf("Updates gave %q, want p1", uid)
		}
	case <-time.After(5 * time.Second):
		t.Error("no update for the pod whose device turned unhealthy")
	}
	want := []corev1.ResourceStatus{{Name: testResource, Resources: []corev1.ResourceHealth{
		{ResourceID: "a", Health: corev1.ResourceHealthStatusHealthy},
		{ResourceID: "b", Health: corev1.ResourceHealthStatusUnhealthy},
	}}}
	if d := cmp.Diff(want, h.m.ResourceHealth("p1", "app")); d != "" {
		t.Errorf("ResourceHealth (-want +got):\n%s", d)
	}
	if got := h.m.ResourceHealth("p1", "other"); got != nil {
		t.Errorf("ResourceHealth of a container without devices = %v", got)
	}
}
