package podresources

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/kubelet/pkg/apis/podresources/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/serve/localgrpc"
)

// node is the providers' data: a small node with one pod holding
// exclusive CPUs, memory, a device and a claim.
type node struct {
	active, all []*corev1.Pod
	cpus        map[string][]int64 // uid/container
	updated     int
}

func (n *node) ActivePods() []*corev1.Pod { return n.active }
func (n *node) AllPods() []*corev1.Pod    { return n.all }
func (n *node) ActivePod(ns, name string) (*corev1.Pod, bool) {
	for _, p := range n.active {
		if p.Namespace == ns && p.Name == name {
			return p, true
		}
	}
	return nil, false
}
func (n *node) ExclusiveCPUs(uid, c string) []int64 { return n.cpus[uid+"/"+c] }
func (n *node) AllocatableCPUs() []int64            { return []int64{1, 2, 3} }
func (n *node) ContainerMemory(uid, c string) []*podresourcesv1.ContainerMemory {
	if uid != "uid-a" || c != "main" {
		return nil
	}
	return []*podresourcesv1.ContainerMemory{{MemoryType: "memory", Size: 1 << 30, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 0}}}}}
}
func (n *node) AllocatableMemory() []*podresourcesv1.ContainerMemory {
	return []*podresourcesv1.ContainerMemory{{MemoryType: "memory", Size: 8 << 30, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 0}}}}}
}
func (n *node) GetDevices(uid, c string) []*podresourcesv1.ContainerDevices {
	if uid != "uid-a" || c != "main" {
		return nil
	}
	return []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/gpu", DeviceIds: []string{"dev-1"}}}
}
func (n *node) GetAllocatableDevices() []*podresourcesv1.ContainerDevices {
	return []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/gpu", DeviceIds: []string{"dev-1", "dev-2"}}}
}
func (n *node) UpdateAllocatedDevices(context.Context) { n.updated++ }
func (n *node) GetDynamicResources(pod *corev1.Pod, c *corev1.Container) []*podresourcesv1.DynamicResource {
	if pod.UID != "uid-a" || c.Name != "main" {
		return nil
	}
	return []*podresourcesv1.DynamicResource{{ClaimName: "claim", ClaimNamespace: pod.Namespace}}
}

func testPod(uid, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				{Name: "setup"},
				{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
			Containers: []corev1.Container{{Name: "main"}, {Name: "helper"}},
		},
	}
}

func newNode() *node {
	a, done := testPod("uid-a", "a"), testPod("uid-done", "done")
	return &node{active: []*corev1.Pod{a}, all: []*corev1.Pod{a, done}, cpus: map[string][]int64{"uid-a/main": {2, 3}}}
}

type harness struct {
	srv   *Server
	reg   *prometheus.Registry
	clock *clocktesting.FakeClock
	v1    podresourcesv1.PodResourcesListerClient
	alpha v1alpha1.PodResourcesListerClient
	sock  string
}

// start serves a Server on a socket in a temp dir (Run, as the agent does)
// and dials it.
func start(t *testing.T, n *node, activeOnly bool) *harness {
	t.Helper()
	h := &harness{reg: prometheus.NewRegistry(), clock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	root := t.TempDir()
	srv, err := New(Config{RootDir: root, Pods: n, CPUs: n, Memory: n, Devices: n, Dynamic: n, UseActivePods: activeOnly, Registerer: h.reg, Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	h.srv, h.sock = srv, SocketPath(root)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	l, err := localgrpc.Listen(h.sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	conn, err := grpc.NewClient("unix://"+h.sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", h.sock)
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	h.v1, h.alpha = podresourcesv1.NewPodResourcesListerClient(conn), v1alpha1.NewPodResourcesListerClient(conn)
	return h
}

func mem(size uint64) []*podresourcesv1.ContainerMemory {
	return []*podresourcesv1.ContainerMemory{{MemoryType: "memory", Size: size, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 0}}}}}
}

func wantPodA() *podresourcesv1.PodResources {
	return &podresourcesv1.PodResources{Name: "a", Namespace: "ns", Containers: []*podresourcesv1.ContainerResources{
		{Name: "sidecar"},
		{
			Name: "main", CpuIds: []int64{2, 3}, Memory: mem(1 << 30),
			Devices:          []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/gpu", DeviceIds: []string{"dev-1"}}},
			DynamicResources: []*podresourcesv1.DynamicResource{{ClaimName: "claim", ClaimNamespace: "ns"}},
		},
		{Name: "helper"},
	}}
}

func TestSocketPath(t *testing.T) {
	if got := SocketPath("/var/lib/kubelet"); got != "/var/lib/kubelet/pod-resources/kubelet.sock" {
		t.Errorf("SocketPath = %q", got)
	}
}

// TestList: the active pods, sidecars before the containers, regular init
// containers left out, each container's CPUs, memory, devices and claims;
// the device manager frees terminated pods' devices first.
func TestList(t *testing.T) {
	n := newNode()
	h := start(t, n, true)
	resp, err := h.v1.List(context.Background(), &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{wantPodA()}}
	if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if n.updated != 1 {
		t.Errorf("UpdateAllocatedDevices called %d times, want 1", n.updated)
	}
}

// TestListAllPods: with KubeletPodResourcesListUseActivePods off List
// shows every pod, the terminal one too.
func TestListAllPods(t *testing.T) {
	h := start(t, newNode(), false)
	resp, err := h.v1.List(context.Background(), &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range resp.GetPodResources() {
		names = append(names, p.GetName())
	}
	if diff := cmp.Diff([]string{"a", "done"}, names); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

// TestGet: an active pod's resources; a pod that is not there, not active,
// or a request without a name is upstream's error, with code Unknown (a
// plain error, as upstream returns), counted in the Get errors.
func TestGet(t *testing.T) {
	h := start(t, newNode(), true)
	resp, err := h.v1.Get(context.Background(), &podresourcesv1.GetPodResourcesRequest{PodName: "a", PodNamespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPodA(), resp.GetPodResources(), protocmp.Transform()); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		req  *podresourcesv1.GetPodResourcesRequest
		want string
	}{
		{"unknown pod", &podresourcesv1.GetPodResourcesRequest{PodName: "nope", PodNamespace: "ns"}, "pod nope in namespace ns not found"},
		{"terminal pod", &podresourcesv1.GetPodResourcesRequest{PodName: "done", PodNamespace: "ns"}, "pod done in namespace ns not found"},
		{"other namespace", &podresourcesv1.GetPodResourcesRequest{PodName: "a", PodNamespace: "other"}, "pod a in namespace other not found"},
		{"empty request", &podresourcesv1.GetPodResourcesRequest{}, "pod  in namespace  not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.v1.Get(context.Background(), tc.req)
			if st := status.Convert(err); st.Code() != codes.Unknown || st.Message() != tc.want {
				t.Errorf("Get error = %v, want Unknown %q", err, tc.want)
			}
		})
	}
	if got := testutil.ToFloat64(h.srv.metrics.getErrors.WithLabelValues("v1")); got != 4 {
		t.Errorf("get errors = %v, want 4", got)
	}
	if got := testutil.ToFloat64(h.srv.metrics.get.WithLabelValues("v1")); got != 5 {
		t.Errorf("get requests = %v, want 5", got)
	}
}

func TestGetAllocatableResources(t *testing.T) {
	h := start(t, newNode(), true)
	resp, err := h.v1.GetAllocatableResources(context.Background(), &podresourcesv1.AllocatableResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &podresourcesv1.AllocatableResourcesResponse{
		Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/gpu", DeviceIds: []string{"dev-1", "dev-2"}}},
		CpuIds:  []int64{1, 2, 3}, Memory: mem(8 << 30),
	}
	if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
		t.Errorf("GetAllocatableResources (-want +got):\n%s", diff)
	}
}

// TestV1alpha1List: every pod, its containers only, their devices.
func TestV1alpha1List(t *testing.T) {
	h := start(t, newNode(), true)
	resp, err := h.alpha.List(context.Background(), &v1alpha1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dev := []*v1alpha1.ContainerDevices{{ResourceName: "example.com/gpu", DeviceIds: []string{"dev-1"}}}
	want := &v1alpha1.ListPodResourcesResponse{PodResources: []*v1alpha1.PodResources{
		{Name: "a", Namespace: "ns", Containers: []*v1alpha1.ContainerResources{{Name: "main", Devices: dev}, {Name: "helper"}}},
		{Name: "done", Namespace: "ns", Containers: []*v1alpha1.ContainerResources{{Name: "main"}, {Name: "helper"}}},
	}}
	if diff := cmp.Diff(want, resp, protocmp.Transform()); diff != "" {
		t.Errorf("v1alpha1 List (-want +got):\n%s", diff)
	}
	if got := testutil.ToFloat64(h.srv.metrics.total.WithLabelValues("v1alpha1")); got != 1 {
		t.Errorf("v1alpha1 requests = %v, want 1", got)
	}
}

// TestRateLimit: a burst of 10 calls passes, the 11th is refused with
// upstream's error before it is counted; 10 ms later (100 QPS) one more
// token is there.
func TestRateLimit(t *testing.T) {
	h := start(t, newNode(), true)
	ctx := context.Background()
	for i := range DefaultBurst {
		if _, err := h.v1.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := h.v1.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || st.Message() != "rejected by rate limit" {
		t.Fatalf("call over the burst: %v, want ResourceExhausted rejected by rate limit", err)
	}
	if got := testutil.ToFloat64(h.srv.metrics.total.WithLabelValues("v1")); got != DefaultBurst {
		t.Errorf("requests counted = %v, want %d", got, DefaultBurst)
	}
	h.clock.Step(10 * time.Millisecond)
	if _, err := h.v1.List(ctx, &podresourcesv1.ListPodResourcesRequest{}); err != nil {
		t.Errorf("call after a token came back: %v", err)
	}
	if _, err := h.v1.List(ctx, &podresourcesv1.ListPodResourcesRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("second call after one token: %v, want ResourceExhausted", err)
	}
}

// TestRunReplacesStaleSocket: a socket file left by an earlier run is
// replaced, and the directory is made 0750.
func TestRunReplacesStaleSocket(t *testing.T) {
	root := t.TempDir()
	sock := SocketPath(root)
	n := newNode()
	srv, err := New(Config{RootDir: root, Pods: n, CPUs: n, Memory: n, Devices: n, Dynamic: n, Registerer: prometheus.NewRegistry(), Clock: clocktesting.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second run finds the first one's socket
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		waitDial(t, sock)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if mode := dirMode(t, filepath.Dir(sock)); mode != 0o750 {
		t.Errorf("socket directory mode %o, want 750", mode)
	}
}

func TestNewRequiresEverything(t *testing.T) {
	if _, err := New(Config{RootDir: "/x"}); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("New with nothing: %v", err)
	}
}

// waitDial waits until the socket answers a List.
func waitDial(t *testing.T, sock string) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := podresourcesv1.NewPodResourcesListerClient(conn).List(ctx, &podresourcesv1.ListPodResourcesRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("List on %s: %v", sock, err)
	}
}

func dirMode(t *testing.T, dir string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// rawCodec sends bytes as they are: a request no client library would
// send.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)   { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error { *(v.(*[]byte)) = b; return nil }
func (rawCodec) Name() string                    { return "proto" }

// TestMalformedRequest: bytes that are not a GetPodResourcesRequest get
// an error, and the server goes on answering.
func TestMalformedRequest(t *testing.T) {
	h := start(t, newNode(), true)
	conn, err := grpc.NewClient("unix://"+h.sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	req, resp := []byte{0x0a, 0xff, 0xff, 0xff}, []byte(nil) // field 1, a length past the end
	err = conn.Invoke(context.Background(), "/v1.PodResourcesLister/Get", &req, &resp, grpc.ForceCodec(rawCodec{}))
	if code := status.Code(err); code != codes.Internal {
		t.Errorf("malformed Get = %v, want Internal", err)
	}
	if _, err := h.v1.Get(context.Background(), &podresourcesv1.GetPodResourcesRequest{PodName: "a", PodNamespace: "ns"}); err != nil {
		t.Errorf("Get after a malformed request: %v", err)
	}
}
