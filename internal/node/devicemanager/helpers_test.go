package devicemanager

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"
)

const testResource = "example.com/dev"

// fakePlugin is a device plugin served on a unix socket in the test's
// directory: it streams what is sent on devices and answers Allocate
// with envs and mounts naming the devices.
type fakePlugin struct {
	pluginapi.UnimplementedDevicePluginServer
	opts    *pluginapi.DevicePluginOptions
	devices chan []*pluginapi.Device
	socket  string
	srv     *grpc.Server

	mu        sync.Mutex
	allocated [][]string
	preStarts [][]string
	preferred []string // GetPreferredAllocation's answer
	response  *pluginapi.ContainerAllocateResponse
}

func startPlugin(t *testing.T, dir, name string, opts *pluginapi.DevicePluginOptions) *fakePlugin {
	t.Helper()
	p := &fakePlugin{opts: opts, devices: make(chan []*pluginapi.Device, 10), socket: filepath.Join(dir, name)}
	ln, err := net.Listen("unix", p.socket)
	if err != nil {
		t.Fatal(err)
	}
	p.srv = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.srv, p)
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(p.stop)
	return p
}

// stop ends the plugin: its stream ends and its socket goes.
func (p *fakePlugin) stop() {
	p.srv.Stop()
	_ = os.Remove(p.socket)
}

func (p *fakePlugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	if p.opts == nil {
		return &pluginapi.DevicePluginOptions{}, nil
	}
	return p.opts, nil
}

func (p *fakePlugin) ListAndWatch(_ *pluginapi.Empty, s pluginapi.DevicePlugin_ListAndWatchServer) error {
	for {
		select {
		case devs := <-p.devices:
			if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
				return err
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func (p *fakePlugin) Allocate(_ context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := &pluginapi.AllocateResponse{}
	for _, c := range r.GetContainerRequests() {
		p.allocated = append(p.allocated, c.GetDevicesIds())
		resp := p.response
		if resp == nil {
			resp = &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"DEVICES": join(c.GetDevicesIds())}}
		}
		out.ContainerResponses = append(out.ContainerResponses, resp)
	}
	return out, nil
}

func (p *fakePlugin) PreStartContainer(_ context.Context, r *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.preStarts = append(p.preStarts, r.GetDevicesIds())
	return &pluginapi.PreStartContainerResponse{}, nil
}

func (p *fakePlugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &pluginapi.PreferredAllocationResponse{ContainerResponses: []*pluginapi.ContainerPreferredAllocationResponse{{DeviceIDs: p.preferred}}}, nil
}

func (p *fakePlugin) allocations() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]string(nil), p.allocated...)
}

func join(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ","
		}
		out += id
	}
	return out
}

func devices(health string, ids ...string) []*pluginapi.Device {
	var out []*pluginapi.Device
	for _, id := range ids {
		out = append(out, &pluginapi.Device{ID: id, Health: health})
	}
	return out
}

// harness is a running Manager in a temporary directory with its active
// pods and a fake clock.
type harness struct {
	t      *testing.T
	dir    string
	clock  *clocktesting.FakeClock
	m      *Manager
	mu     sync.Mutex
	active []*corev1.Pod
	ready  bool
	kicks  chan struct{}
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t *testing.T, dir string, running map[string]sets.Set[string]) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir, clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)), ready: true, kicks: make(chan struct{}, 100)}
	m, err := New(context.Background(), Config{
		Dir: dir, Clock: h.clock, Running: running, NUMANodes: []int{0},
		ActivePods: func() []*corev1.Pod {
			h.mu.Lock()
			defer h.mu.Unlock()
			return append([]*corev1.Pod(nil), h.active...)
		},
		SourcesReady: func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.ready
		},
		Changed: func() {
			select {
			case h.kicks <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	return h
}

// run serves registrations until the test ends (or stop).
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.m.Run(ctx) }()
	// The socket file exists from bind(2), before listen(2): wait for a
	// connection to be accepted.
	waitFor(h.t, "registration socket", func() bool {
		c, err := net.Dial("unix", filepath.Join(h.dir, SocketName))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	h.t.Cleanup(h.stop)
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	if err := <-h.done; err != nil {
		h.t.Errorf("Run: %v", err)
	}
	h.cancel = nil
}

func (h *harness) setActive(pods ...*corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active = pods
}

// register registers the plugin's socket for resource on the manager's
// registration socket.
func (h *harness) register(p *fakePlugin, resourceName string) error {
	h.t.Helper()
	conn, err := grpc.NewClient("unix://"+filepath.Join(h.dir, SocketName), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: filepath.Base(p.socket), ResourceName: resourceName,
	})
	return err
}

// waitCapacity waits until the manager reports want (capacity/allocatable of
// testResource; -1: absent).
func (h *harness) waitCapacity(capacity, allocatable int64) {
	h.t.Helper()
	waitFor(h.t, "capacity", func() bool {
		c, a, _ := h.m.Capacity(context.Background())
		return count(c) == capacity && count(a) == allocatable
	})
}

func count(l corev1.ResourceList) int64 {
	q, ok := l[testResource]
	if !ok {
		return -1
	}
	return q.Value()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pod is a pod whose containers ask for their count of devices; those
// named in initNames are init containers, in that order.
func pod(uid string, containers map[string]int64, initNames ...string) *corev1.Pod {
	p := &corev1.Pod{}
	p.UID, p.Name, p.Namespace = types.UID(uid), "pod-"+uid, "default"
	res := func(n int64) corev1.ResourceRequirements {
		l := corev1.ResourceList{testResource: *resource.NewQuantity(n, resource.DecimalSI)}
		return corev1.ResourceRequirements{Limits: l, Requests: l}
	}
	for _, name := range initNames {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name, Resources: res(containers[name])})
	}
	for _, name := range sets.List(sets.KeySet(containers).Delete(initNames...)) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Resources: res(containers[name])})
	}
	return p
}

// shortDir is a temporary directory short enough for unix socket paths.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
