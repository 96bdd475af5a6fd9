package dra

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	drahealthv1 "k8s.io/kubelet/pkg/apis/dra-health/v1"
	drahealthv1alpha1 "k8s.io/kubelet/pkg/apis/dra-health/v1alpha1"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const (
	testDriver = "test-driver.cdi.k8s.io"
	testNode   = "node-1"
	testNS     = "default"
)

// call is one call a fake driver served: the RPC, over which service,
// and the claims' names.
type call struct {
	RPC, Service string
	Claims       []string
}

// fakeDriver is a DRA driver's kubelet plugin on a unix socket: it
// prepares each claim with one device per allocation result, whose CDI
// ID names the claim, and records the calls. Safe for concurrent use.
type fakeDriver struct {
	server   *grpc.Server
	endpoint string
	// mu guards calls and fail.
	mu    sync.Mutex
	calls []call
	// fail is the per-claim error it answers with ("" none).
	fail string
	// devices are the devices it prepares for a claim, by claim name
	// (none given: one device of request "gpu").
	devices map[string][]*drapb.Device
	// health is its DRAResourceHealth server, when it serves one.
	health *fakeHealth
}

// startDriver serves a fake driver offering the given services (v1,
// v1beta1 or both, and the health services v1 and v1alpha1) on a socket in a short temporary directory.
func startDriver(t *testing.T, services ...string) *fakeDriver {
	t.Helper()
	dir, err := os.MkdirTemp("", "dra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	d := &fakeDriver{server: grpc.NewServer(), endpoint: filepath.Join(dir, "dra.sock"), health: newFakeHealth()}
	l, err := net.Listen("unix", d.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range services {
		switch s {
		case drapb.DRAPluginService:
			drapb.RegisterDRAPluginServer(d.server, &fakeService{d: d, service: s})
		case drapbv1beta1.DRAPluginService:
			drapbv1beta1.RegisterDRAPluginServer(d.server, drapbv1beta1.V1ServerWrapper{DRAPluginServer: &fakeService{d: d, service: s}})
		case drahealthv1.DRAResourceHealthService:
			drahealthv1.RegisterDRAResourceHealthServer(d.server, &fakeHealthService{h: d.health, service: s})
		case drahealthv1alpha1.DRAResourceHealthService:
			drahealthv1alpha1.RegisterDRAResourceHealthServer(d.server, drahealthv1.V1ServerWrapper{Server: &fakeHealthService{h: d.health, service: s}})
		}
	}
	go func() { _ = d.server.Serve(l) }()
	t.Cleanup(d.server.Stop)
	return d
}

func (d *fakeDriver) Calls() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// setDevices has the driver prepare the claim with these devices.
func (d *fakeDriver) setDevices(claim string, devices ...*drapb.Device) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.devices == nil {
		d.devices = map[string][]*drapb.Device{}
	}
	d.devices[claim] = devices
}

func (d *fakeDriver) setFail(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = msg
}

// fakeService is the driver's DRAPlugin as one service sees it.
type fakeService struct {
	drapb.UnimplementedDRAPluginServer
	d       *fakeDriver
	service string
}

func (s *fakeService) record(rpc string, claims []*drapb.Claim) (string, map[string][]*drapb.Device) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	c := call{RPC: rpc, Service: s.service}
	for _, cl := range claims {
		c.Claims = append(c.Claims, cl.Name)
	}
	s.d.calls = append(s.d.calls, c)
	return s.d.fail, maps.Clone(s.d.devices)
}

func (s *fakeService) NodePrepareResources(_ context.Context, req *drapb.NodePrepareResourcesRequest) (*drapb.NodePrepareResourcesResponse, error) {
	fail, devices := s.record("NodePrepareResources", req.Claims)
	resp := &drapb.NodePrepareResourcesResponse{Claims: map[string]*drapb.NodePrepareResourceResponse{}}
	for _, c := range req.Claims {
		if fail != "" {
			resp.Claims[c.Uid] = &drapb.NodePrepareResourceResponse{Error: fail}
			continue
		}
		if ds, ok := devices[c.Name]; ok {
			resp.Claims[c.Uid] = &drapb.NodePrepareResourceResponse{Devices: ds}
			continue
		}
		resp.Claims[c.Uid] = &drapb.NodePrepareResourceResponse{Devices: []*drapb.Device{{
			RequestNames: []string{"gpu"}, PoolName: testNode, DeviceName: "dev-" + c.Name,
			CdiDeviceIds: []string{"example.com/test=" + c.Name},
		}}}
	}
	return resp, nil
}

func (s *fakeService) NodeUnprepareResources(_ context.Context, req *drapb.NodeUnprepareResourcesRequest) (*drapb.NodeUnprepareResourcesResponse, error) {
	fail, _ := s.record("NodeUnprepareResources", req.Claims)
	resp := &drapb.NodeUnprepareResourcesResponse{Claims: map[string]*drapb.NodeUnprepareResourceResponse{}}
	for _, c := range req.Claims {
		resp.Claims[c.Uid] = &drapb.NodeUnprepareResourceResponse{Error: fail}
	}
	return resp, nil
}

// allocatedClaim is a claim of testDriver allocated on the node and
// reserved for the pods; owner, when set, controls it (a generated one).
func allocatedClaim(name string, owner *corev1.Pod, reservedFor ...*corev1.Pod) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name)},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: testDriver, Pool: testNode, Device: "dev-" + name},
			}},
		}},
	}
	if owner != nil {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	for _, p := range reservedFor {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
	}
	return c
}

// claimPod is a pod whose container "ctr" uses the pod claim "gpu",
// which the template gpu-template produced as claimName (a status entry).
func claimPod(name, claimName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu-template")}},
			Containers: []corev1.Container{
				{Name: "ctr", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}},
				{Name: "other"},
			},
		},
		Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(claimName)}}},
	}
}

// sharedPod is a pod that uses the existing claim name directly.
func sharedPod(name, claimName string) *corev1.Pod {
	p := claimPod(name, claimName)
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claimName)}}
	p.Status.ResourceClaimStatuses = nil
	return p
}

// testManager is a Manager over dir with a fake clientset holding the
// node and objs, and a fake clock.
func testManager(t *testing.T, dir string, objs ...any) (*Manager, *fake.Clientset, *testclock.FakeClock) {
	t.Helper()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}})
	for _, o := range objs {
		if c, ok := o.(*resourceapi.ResourceClaim); ok {
			if _, err := client.ResourceV1().ResourceClaims(c.Namespace).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clk := testclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	m, err := New(Config{Client: client, NodeName: testNode, StateDir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return m, client, clk
}

// register registers the driver's endpoint with the manager's drivers.
func register(t *testing.T, m *Manager, d *fakeDriver, versions ...string) {
	t.Helper()
	if err := m.Drivers().RegisterPlugin(context.Background(), testDriver, d.endpoint, versions, nil); err != nil {
		t.Fatalf("RegisterPlugin: %v", err)
	}
	t.Cleanup(func() { m.Drivers().close() })
}

func fakeClock() *testclock.FakeClock { return testclock.NewFakeClock(time.Unix(1_700_000_000, 0)) }

func uidStrings(uids []types.UID) []string {
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	slices.Sort(out)
	return out
}
