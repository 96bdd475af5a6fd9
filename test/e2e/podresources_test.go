package e2e

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"

	"github.com/berthk8s/berth/internal/serve/podresources"
	"github.com/berthk8s/berth/internal/serve/podsapi"
)

// TestPodResourcesAndPodsAPI: a berth node with the static CPU manager
// (CPU 0 reserved; the host has two CPUs) serves both node-local sockets
// under its root directory. A Pods API watch started before the pod sees
// it ADDED; the pod resources API lists the running Guaranteed pod's
// container with its exclusive CPU 1, gets it by name, refuses an unknown
// pod with upstream's error and reports CPU 1 allocatable; the Pods API
// lists the pod and gets it by UID, Running; removing the manifest sends
// DELETED and the pod leaves List. /metrics counts the calls under
// upstream's names.
func TestPodResourcesAndPodsAPI(t *testing.T) {
	requireE2E(t)
	if runtime.NumCPU() != 2 {
		t.Skipf("this test expects 2 CPUs, the host has %d", runtime.NumCPU())
	}
	n := newNode(t, "cpuManagerPolicy: static", `reservedSystemCPUs: "0"`)
	n.start()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res := podresourcesv1.NewPodResourcesListerClient(dialSocket(t, podresources.SocketPath(n.rootDir)))
	pods := podsv1alpha1.NewPodsClient(dialSocket(t, podsapi.SocketPath(n.rootDir)))
	watch := startWatch(ctx, t, pods)
	for _, sock := range []string{podresources.SocketPath(n.rootDir), podsapi.SocketPath(n.rootDir)} {
		fi, err := os.Stat(filepath.Dir(sock))
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("socket directory of %s: %v, %v; want mode 0750 (root only)", sock, fi, err)
		}
	}

	n.writeManifest("pinned.yaml", qosPod("pinned", `    resources:
      requests: {cpu: 1, memory: 64Mi}
      limits: {cpu: 1, memory: 64Mi}
`))
	pod := n.waitPod(fullName("pinned"), "running", running)
	if ev := nextEvent(t, watch, pod.UID); ev.GetType() != podsv1alpha1.EventType_ADDED {
		t.Errorf("first watch event of the pod = %v, want ADDED", ev.GetType())
	}

	list, err := res.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	must(t, err)
	want := &podresourcesv1.PodResources{Name: pod.Name, Namespace: pod.Namespace,
		Containers: []*podresourcesv1.ContainerResources{{Name: "main", CpuIds: []int64{1}}}}
	if prs := list.GetPodResources(); len(prs) != 1 || prs[0].String() != want.String() {
		t.Errorf("List = %v, want [%v]", prs, want)
	}
	got, err := res.Get(ctx, &podresourcesv1.GetPodResourcesRequest{PodName: pod.Name, PodNamespace: pod.Namespace})
	if err != nil || got.GetPodResources().String() != want.String() {
		t.Errorf("Get = %v, %v; want %v", got, err, want)
	}
	_, err = res.Get(ctx, &podresourcesv1.GetPodResourcesRequest{PodName: "nope", PodNamespace: "default"})
	if msg := status.Convert(err).Message(); msg != "pod nope in namespace default not found" {
		t.Errorf("Get(nope) = %v, want upstream's not found", err)
	}
	alloc, err := res.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{})
	if err != nil || !slices.Equal(alloc.GetCpuIds(), []int64{1}) || len(alloc.GetDevices()) != 0 {
		t.Errorf("GetAllocatableResources = %v, %v; want CPU 1, no devices", alloc, err)
	}

	listed, err := pods.ListPods(ctx, &podsv1alpha1.ListPodsRequest{})
	must(t, err)
	if len(listed.GetPods()) != 1 || decodePod(t, listed.GetPods()[0]).UID != pod.UID {
		t.Errorf("ListPods has %d pods, want the pinned one", len(listed.GetPods()))
	}
	one, err := pods.GetPod(ctx, &podsv1alpha1.GetPodRequest{PodUID: string(pod.UID)})
	must(t, err)
	if p := decodePod(t, one.GetPod()); p.Name != pod.Name || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
		t.Errorf("GetPod = %s %s %v, want %s Running with its container", p.Name, p.Status.Phase, p.Status.ContainerStatuses, pod.Name)
	}

	metrics, err := httpGet(n.url("/metrics"))
	must(t, err)
	for _, want := range []string{
		`kubelet_pod_resources_endpoint_requests_total{server_api_version="v1"} 4`,
		`kubelet_pod_resources_endpoint_errors_get{server_api_version="v1"} 1`,
		`kubelet_pod_requests_get_total{server_api_version="v1alpha1",status_code="OK"} 1`,
		`kubelet_pod_watch_events_dropped_total 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	n.removeManifest("pinned.yaml")
	for ev := nextEvent(t, watch, pod.UID); ev.GetType() != podsv1alpha1.EventType_DELETED; ev = nextEvent(t, watch, pod.UID) {
	}
	list, err = res.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil || len(list.GetPodResources()) != 0 {
		t.Errorf("List after the pod went = %v, %v; want none", list.GetPodResources(), err)
	}
}

func dialSocket(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
	must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// startWatch opens a watch and reads it up to INITIAL_SYNC_COMPLETE.
func startWatch(ctx context.Context, t *testing.T, c podsv1alpha1.PodsClient) podsv1alpha1.Pods_WatchPodsClient {
	t.Helper()
	var w podsv1alpha1.Pods_WatchPodsClient
	deadline := time.Now().Add(waitTimeout)
	for { // FailedPrecondition until berth has seen its pod sources
		var err error
		if w, err = c.WatchPods(ctx, &podsv1alpha1.WatchPodsRequest{}); err != nil {
			t.Fatal(err)
		}
		ev, err := w.Recv()
		if err == nil && ev.GetType() == podsv1alpha1.EventType_INITIAL_SYNC_COMPLETE {
			return w
		}
		if err == nil {
			t.Fatalf("watch of an empty node sent %v first", ev.GetType())
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch: %v", err)
		}
		time.Sleep(pollInterval)
	}
}

// nextEvent returns the watch's next event about the pod uid.
func nextEvent(t *testing.T, w podsv1alpha1.Pods_WatchPodsClient, uid types.UID) *podsv1alpha1.WatchPodsEvent {
	t.Helper()
	for {
		ev, err := w.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if ev.GetPod() != nil && decodePod(t, ev.GetPod()).UID == uid {
			return ev
		}
	}
}

func decodePod(t *testing.T, b []byte) *corev1.Pod {
	t.Helper()
	var p corev1.Pod
	must(t, p.Unmarshal(b))
	return &p
}
