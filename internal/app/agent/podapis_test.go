package agent

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/devicemanager"
	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/syncloop"
	"github.com/berthk8s/berth/internal/serve/podresources"
	"github.com/berthk8s/berth/internal/serve/podsapi"
)

// TestPodAPIsAgainstFakeRuntime runs the node on the in-memory CRI and
// reads a static pod through both sockets under the root directory: the
// pod resources API lists its container, answers GetAllocatableResources,
// refuses an unknown pod with upstream's error and a burst past the rate
// limit; the Pods API lists it Running, gets it by UID, and a watch sees
// it deleted when its manifest goes.
func TestPodAPIsAgainstFakeRuntime(t *testing.T) {
	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runWith(ctx, cfg, "test", clock.RealClock{}, testProcess()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, port, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	res := podresourcesv1.NewPodResourcesListerClient(dialUnix(t, podresources.SocketPath(cfg.RootDir)))
	list, err := res.List(ctx, &podresourcesv1.ListPodResourcesRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if prs := list.GetPodResources(); len(prs) != 1 || prs[0].GetName() != pod.Name || prs[0].GetNamespace() != pod.Namespace ||
		len(prs[0].GetContainers()) != 1 || prs[0].GetContainers()[0].GetName() != "web" {
		t.Errorf("List = %v, want %s/%s with container web", prs, pod.Namespace, pod.Name)
	}
	got, err := res.Get(ctx, &podresourcesv1.GetPodResourcesRequest{PodName: pod.Name, PodNamespace: pod.Namespace})
	if err != nil || got.GetPodResources().GetName() != pod.Name {
		t.Errorf("Get(%s) = %v, %v", pod.Name, got, err)
	}
	if _, err := res.Get(ctx, &podresourcesv1.GetPodResourcesRequest{PodName: "nope", PodNamespace: "default"}); status.Convert(err).Message() != "pod nope in namespace default not found" {
		t.Errorf("Get(nope) = %v", err)
	}
	if _, err := res.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{}); err != nil && status.Code(err) != codes.ResourceExhausted {
		t.Errorf("GetAllocatableResources: %v", err)
	}
	limited := false
	for range 3 * podresources.DefaultBurst {
		_, err := res.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{})
		limited = limited || status.Code(err) == codes.ResourceExhausted
	}
	if !limited {
		t.Errorf("%d calls at once were never rate limited", 3*podresources.DefaultBurst)
	}

	pods := podsv1alpha1.NewPodsClient(dialUnix(t, podsapi.SocketPath(cfg.RootDir)))
	one, err := pods.GetPod(ctx, &podsv1alpha1.GetPodRequest{PodUID: string(pod.UID)}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	var fromAPI corev1.Pod
	if err := fromAPI.Unmarshal(one.GetPod()); err != nil || fromAPI.Name != pod.Name || fromAPI.Status.Phase != corev1.PodRunning {
		t.Errorf("GetPod = %s %s, %v", fromAPI.Name, fromAPI.Status.Phase, err)
	}
	watchCtx, stop := context.WithTimeout(ctx, time.Minute) // a missing event fails, not hangs
	defer stop()
	watch, err := pods.WatchPods(watchCtx, &podsv1alpha1.WatchPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for ev := recvEvent(t, watch); ev.GetType() != podsv1alpha1.EventType_INITIAL_SYNC_COMPLETE; ev = recvEvent(t, watch) {
	}
	if err := os.Remove(filepath.Join(manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	for {
		ev := recvEvent(t, watch)
		if ev.GetType() != podsv1alpha1.EventType_DELETED {
			continue
		}
		var gone corev1.Pod
		if err := gone.Unmarshal(ev.GetPod()); err != nil || gone.UID != pod.UID {
			t.Errorf("DELETED %s, %v; want %s", gone.UID, err, pod.UID)
		}
		break
	}
}

func recvEvent(t *testing.T, w podsv1alpha1.Pods_WatchPodsClient) *podsv1alpha1.WatchPodsEvent {
	t.Helper()
	ev, err := w.Recv()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return ev
}

func dialUnix(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestContainerMemory: one entry per block, as upstream's
// containerMemoryFromBlock, NUMA nodes in the block's order.
func TestContainerMemory(t *testing.T) {
	got := containerMemory([]state.Block{
		{NUMAAffinity: []int{1, 0}, Type: "memory", Size: 1 << 30},
		{NUMAAffinity: []int{0}, Type: "hugepages-2Mi", Size: 4 << 20},
	})
	want := []*podresourcesv1.ContainerMemory{
		{MemoryType: "memory", Size: 1 << 30, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 1}, {ID: 0}}}},
		{MemoryType: "hugepages-2Mi", Size: 4 << 20, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 0}}}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("containerMemory (-want +got):\n%s", diff)
	}
	if got := containerMemory(nil); got != nil {
		t.Errorf("containerMemory(nil) = %v", got)
	}
	if got := cpuIDs(cpuset.New(3, 1, 2)); !cmp.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("cpuIDs = %v", got)
	}
}

// TestPodsAPIGate: the pod resources API is always served (its gates are
// GA upstream); the Pods API only with PodsAPI on, its default, and its
// metrics are registered either way, as upstream's.
func TestPodsAPIGate(t *testing.T) {
	for _, tc := range []struct {
		gates map[string]bool
		want  []string
	}{
		{nil, []string{"pod-resources", "pods-api"}},
		{map[string]bool{"PodsAPI": false}, []string{"pod-resources"}},
	} {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		m, err := newMetrics("node-a", clk)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{NodeName: "node-a", RootDir: t.TempDir()}
		cfg.Kubelet.FeatureGates = tc.gates
		n := &node{cfg: cfg, clock: clk, metrics: m, pods: podPath{desired: syncloop.NewDesired(), statuses: podstatus.NewStore(clk)}}
		apis, err := n.newPodAPIs()
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(apis.runs())); !cmp.Equal(got, tc.want) {
			t.Errorf("gates %v: servers %v, want %v", tc.gates, got, tc.want)
		}
		families, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == "kubelet_pod_watch_events_dropped_total" }) {
			t.Errorf("gates %v: kubelet_pod_watch_events_dropped_total not registered (upstream registers it whatever the gate)", tc.gates)
		}
	}
}

// TestContainerDevices: one entry per device and NUMA node, a device
// without topology once, as upstream's containerDevicesFromResourceDeviceInstances.
func TestContainerDevices(t *testing.T) {
	got := containerDevices(map[string][]devicemanager.Device{
		"example.com/b": {{ID: "b1"}},
		"example.com/a": {{ID: "a1", NUMA: []int64{0, 1}}, {ID: "a2", NUMA: []int64{1}}},
	})
	want := []*podresourcesv1.ContainerDevices{
		{ResourceName: "example.com/a", DeviceIds: []string{"a1"}, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 0}}}},
		{ResourceName: "example.com/a", DeviceIds: []string{"a1"}, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 1}}}},
		{ResourceName: "example.com/a", DeviceIds: []string{"a2"}, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: 1}}}},
		{ResourceName: "example.com/b", DeviceIds: []string{"b1"}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("containerDevices (-want +got):\n%s", diff)
	}
	if containerDevices(nil) != nil {
		t.Error("no devices: not nil")
	}
}
