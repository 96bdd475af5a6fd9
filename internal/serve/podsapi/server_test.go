package podsapi

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/serve/localgrpc"
)

// kubelet is the pods and statuses the server reads. mu guards all.
type kubelet struct {
	mu       sync.Mutex
	pods     map[types.UID]*corev1.Pod
	statuses map[types.UID]corev1.PodStatus
	ready    bool
}

func (k *kubelet) Pods() []*corev1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range k.pods {
		out = append(out, p)
	}
	return out
}

func (k *kubelet) Pod(uid types.UID) (*corev1.Pod, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.pods[uid]
	return p, ok
}

func (k *kubelet) Status(uid types.UID) (corev1.PodStatus, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.statuses[uid]
	return s, ok
}

func (k *kubelet) SourcesReady() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ready
}

func apiPod(uid, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		}},
	}
}

func running() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"}
}

type harness struct {
	k      *kubelet
	srv    *Server
	client podsv1alpha1.PodsClient
	clock  *clocktesting.FakeClock
}

func start(t *testing.T) *harness {
	t.Helper()
	k := &kubelet{ready: true,
		pods:     map[types.UID]*corev1.Pod{"uid-b": apiPod("uid-b", "b"), "uid-a": apiPod("uid-a", "a")},
		statuses: map[types.UID]corev1.PodStatus{"uid-a": running()},
	}
	h := &harness{k: k, clock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	root := t.TempDir()
	srv, err := New(Config{RootDir: root, Pods: k.Pods, Pod: k.Pod, Status: k.Status, SourcesReady: k.SourcesReady, Registerer: prometheus.NewRegistry(), Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	l, err := localgrpc.Listen(SocketPath(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	conn, err := grpc.NewClient("unix://"+SocketPath(root), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	h.client = podsv1alpha1.NewPodsClient(conn)
	return h
}

func decode(t *testing.T, b []byte) *corev1.Pod {
	t.Helper()
	var p corev1.Pod
	if err := p.Unmarshal(b); err != nil {
		t.Fatalf("unmarshal pod: %v", err)
	}
	return &p
}

// summary is what the tests compare of a pod: name, phase, Ready.
func summary(p *corev1.Pod) string {
	ready := ""
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = string(c.Status) + "/" + c.Reason
		}
	}
	return p.Name + " " + string(p.Status.Phase) + " " + ready
}

func TestSocketPath(t *testing.T) {
	if got := SocketPath("/var/lib/kubelet"); got != "/var/lib/kubelet/pods-api/pods-api.sock" {
		t.Errorf("SocketPath = %q", got)
	}
}

// TestListPods: every pod by UID; one with a generated status has it, one
// without has the API's, Pending and not Ready.
func TestListPods(t *testing.T) {
	h := start(t)
	resp, err := h.client.ListPods(context.Background(), &podsv1alpha1.ListPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range resp.GetPods() {
		got = append(got, summary(decode(t, b)))
	}
	want := []string{"a Running ", "b Pending False/ContainersNotReady"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListPods (-want +got):\n%s", diff)
	}
}

// TestGetPod: a pod by UID; an unknown or empty UID is NotFound with
// upstream's message.
func TestGetPod(t *testing.T) {
	h := start(t)
	resp, err := h.client.GetPod(context.Background(), &podsv1alpha1.GetPodRequest{PodUID: "uid-a"})
	if err != nil {
		t.Fatal(err)
	}
	if p := decode(t, resp.GetPod()); summary(p) != "a Running " || p.Status.PodIP != "10.0.0.7" || p.Spec.Containers[0].Image != "img" {
		t.Errorf("GetPod = %s %+v", summary(p), p.Status)
	}
	for _, uid := range []string{"nope", ""} {
		_, err := h.client.GetPod(context.Background(), &podsv1alpha1.GetPodRequest{PodUID: uid})
		if st := status.Convert(err); st.Code() != codes.NotFound || st.Message() != "pod with UID "+uid+" not found" {
			t.Errorf("GetPod(%q) = %v, want NotFound", uid, err)
		}
	}
	if got := testutil.ToFloat64(h.srv.metrics.get.WithLabelValues("v1alpha1", "NotFound")); got != 2 {
		t.Errorf("get NotFound requests = %v, want 2", got)
	}
}

// TestNotReady: until every source is ready each call is
// FailedPrecondition "Kubelet is initializing".
func TestNotReady(t *testing.T) {
	h := start(t)
	h.k.mu.Lock()
	h.k.ready = false
	h.k.mu.Unlock()
	ctx := context.Background()
	_, errList := h.client.ListPods(ctx, &podsv1alpha1.ListPodsRequest{})
	_, errGet := h.client.GetPod(ctx, &podsv1alpha1.GetPodRequest{PodUID: "uid-a"})
	stream, err := h.client.WatchPods(ctx, &podsv1alpha1.WatchPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, errWatch := stream.Recv()
	for name, err := range map[string]error{"ListPods": errList, "GetPod": errGet, "WatchPods": errWatch} {
		if st := status.Convert(err); st.Code() != codes.FailedPrecondition || st.Message() != "Kubelet is initializing" {
			t.Errorf("%s = %v, want FailedPrecondition Kubelet is initializing", name, err)
		}
	}
}

// TestRateLimit: ListPods and GetPod share upstream's bucket (burst 10).
func TestRateLimit(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	for i := range DefaultBurst {
		if _, err := h.client.GetPod(ctx, &podsv1alpha1.GetPodRequest{PodUID: "uid-a"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := h.client.ListPods(ctx, &podsv1alpha1.ListPodsRequest{})
	if st := status.Convert(err); st.Code() != codes.ResourceExhausted || st.Message() != "rejected by rate limit" {
		t.Fatalf("call over the burst = %v", err)
	}
	h.clock.Step(10 * time.Millisecond)
	if _, err := h.client.ListPods(ctx, &podsv1alpha1.ListPodsRequest{}); err != nil {
		t.Errorf("after 10 ms: %v", err)
	}
}

type watchEvent struct{ Type, Pod string }

func recv(t *testing.T, s podsv1alpha1.Pods_WatchPodsClient) watchEvent {
	t.Helper()
	ev, err := s.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if ev.GetPod() == nil {
		return watchEvent{Type: ev.GetType().String()}
	}
	return watchEvent{Type: ev.GetType().String(), Pod: summary(decode(t, ev.GetPod()))}
}

// TestWatchPods: the initial list, INITIAL_SYNC_COMPLETE, then ADDED for a
// pod's first status, MODIFIED for a changed one, nothing for the same
// one, DELETED (name, namespace, UID only) once it is finished and nothing
// after; a pod gone without finishing gets DELETED when forgotten.
func TestWatchPods(t *testing.T) {
	h := start(t)
	stream, err := h.client.WatchPods(context.Background(), &podsv1alpha1.WatchPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := []watchEvent{recv(t, stream), recv(t, stream), recv(t, stream)}
	want := []watchEvent{{"ADDED", "a Running "}, {"ADDED", "b Pending False/ContainersNotReady"}, {Type: "INITIAL_SYNC_COMPLETE"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("initial events (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	c := apiPod("uid-c", "c")
	h.srv.Observe(c, corev1.PodStatus{Phase: corev1.PodPending})
	h.srv.Observe(c, corev1.PodStatus{Phase: corev1.PodPending}) // no change: no event
	h.srv.Observe(c, running())
	h.srv.Finished("uid-c")
	h.srv.Observe(c, corev1.PodStatus{Phase: corev1.PodSucceeded}) // finished: no event
	h.srv.Forget(ctx, "uid-c")                                     // DELETED was sent
	d := apiPod("uid-d", "d")
	d.DeletionTimestamp = &metav1.Time{Time: time.Unix(5, 0)}
	h.srv.Observe(d, running()) // first seen while being deleted: MODIFIED, as upstream
	f := apiPod("uid-f", "f")
	h.srv.Observe(f, running())
	h.srv.Forget(ctx, "uid-f")
	h.srv.Forget(ctx, "uid-f") // once
	got = nil
	for range 6 {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		p := decode(t, ev.GetPod())
		if ev.GetType() == podsv1alpha1.EventType_DELETED {
			if p.Namespace != "ns" || p.UID != types.UID("uid-"+p.Name) || len(p.Spec.Containers) != 0 || p.Status.Phase != "" {
				t.Errorf("DELETED carries more than name, namespace and UID: %+v", p)
			}
			got = append(got, watchEvent{"DELETED", p.Name})
			continue
		}
		got = append(got, watchEvent{ev.GetType().String(), summary(p)})
	}
	want = []watchEvent{{"ADDED", "c Pending "}, {"MODIFIED", "c Running "}, {"DELETED", "c"}, {"MODIFIED", "d Running "}, {"ADDED", "f Running "}, {"DELETED", "f"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if held := h.srv.HeldPods(); len(held) != 1 || held[0] != "uid-d" {
		t.Errorf("HeldPods = %v, want [uid-d]", held)
	}
}

// TestSlowWatcherDropped: a watcher that reads nothing while more than its
// buffer of events arrives is dropped with ResourceExhausted, counted;
// berth never blocks on it, and another watcher still gets events.
func TestSlowWatcherDropped(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	slow, err := h.client.WatchPods(ctx, &podsv1alpha1.WatchPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the initial list: the watcher is registered
		recv(t, slow)
	}
	// More events than the watcher's buffer, the gRPC stream's flow
	// control window and the socket can hold between them.
	big := apiPod("uid-big", "big")
	big.Annotations = map[string]string{"pad": string(make([]byte, 64<<10))}
	for i := range 5 * watcherBuffer {
		h.srv.Observe(big, corev1.PodStatus{Phase: corev1.PodRunning, Message: time.Duration(i).String()})
	}
	var last error
	for {
		if _, last = slow.Recv(); last != nil {
			break
		}
	}
	if st := status.Convert(last); st.Code() != codes.ResourceExhausted || st.Message() != "watch client channel closed" {
		t.Errorf("slow watcher ended with %v, want ResourceExhausted watch client channel closed", last)
	}
	if got := testutil.ToFloat64(h.srv.metrics.watchDropped); got < 1 {
		t.Errorf("dropped = %v, want at least 1", got)
	}
	fresh, err := h.client.WatchPods(ctx, &podsv1alpha1.WatchPodsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if recv(t, fresh).Type == "INITIAL_SYNC_COMPLETE" {
			break
		}
	}
	h.srv.Observe(apiPod("uid-e", "e"), running())
	if ev := recv(t, fresh); ev != (watchEvent{"ADDED", "e Running "}) {
		t.Errorf("fresh watcher got %+v", ev)
	}
}

// TestWatchEndsWithServer: a watch in flight ends when berth stops.
func TestWatchEndsWithServer(t *testing.T) {
	k := &kubelet{ready: true, pods: map[types.UID]*corev1.Pod{}}
	root := t.TempDir()
	srv, err := New(Config{RootDir: root, Pods: k.Pods, Pod: k.Pod, Status: k.Status, SourcesReady: k.SourcesReady, Registerer: prometheus.NewRegistry(), Clock: clocktesting.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	conn, err := grpc.NewClient("unix://"+SocketPath(root), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	stream, err := podsv1alpha1.NewPodsClient(conn).WatchPods(context.Background(), &podsv1alpha1.WatchPodsRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stream.Recv(); err != nil || ev.GetType() != podsv1alpha1.EventType_INITIAL_SYNC_COMPLETE {
		t.Fatalf("first event %v, %v", ev, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Errorf("watch after stop: %v, want an error", err)
	}
}
