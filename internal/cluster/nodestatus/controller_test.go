package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeRecorder keeps the reasons of the events it is given.
type fakeRecorder struct {
	mu      sync.Mutex // guards reasons
	reasons []string
}

func (r *fakeRecorder) NodeEventf(_, reason, _ string, _ ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reasons = append(r.reasons, reason)
}

func (r *fakeRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reasons
	r.reasons = nil
	return out
}

// harness is a controller over a fake clientset and clock whose Inputs the
// test controls.
type harness struct {
	client *fake.Clientset
	clock  *clocktesting.FakeClock
	rec    *fakeRecorder
	ctrl   *Controller
	mu     sync.Mutex // guards in
	in     Inputs
}

func newHarness(t *testing.T, objects ...*corev1.Node) *harness {
	t.Helper()
	h := &harness{client: fake.NewClientset(), clock: clocktesting.NewFakeClock(t0), rec: &fakeRecorder{}, in: baseInputs()}
	for _, o := range objects {
		if err := h.client.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	ctrl, err := New(Config{
		Client: h.client, NodeName: "node-a", Register: true, Clock: h.clock,
		Labels:          map[string]string{"role": "edge"},
		UpdateFrequency: 10 * time.Second, ReportFrequency: 5 * time.Minute,
		Inputs: func(context.Context) Inputs {
			h.mu.Lock()
			defer h.mu.Unlock()
			in := h.in
			in.Now = h.clock.Now()
			return in
		},
		Recorder: h.rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.ctrl = ctrl
	return h
}

func (h *harness) setInputs(f func(*Inputs)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.in)
}

// requests returns "verb resource[/subresource]" of the requests sent
// since the last call.
func (h *harness) requests() []string {
	var out []string
	for _, a := range h.client.Actions() {
		r := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		out = append(out, r)
	}
	h.client.ClearActions()
	return out
}

func TestControllerRegistersThenReportsChanges(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h := newHarness(t)
	l := &loop{c: h.ctrl}

	l.sync(ctx, false)
	// The created Node carries its status: nothing to patch yet.
	if diff := cmp.Diff([]string{"create nodes", "get nodes"}, h.requests()); diff != "" {
		t.Errorf("first sync requests mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}, h.rec.take()); diff != "" {
		t.Errorf("registration events mismatch (-want +got):\n%s", diff)
	}
	node := h.ctrl.Node()
	if node == nil || node.Labels["role"] != "edge" || node.Annotations[AnnotationControllerManagedAttach] != "true" {
		t.Fatalf("Node() = %v, want the registered node", node)
	}

	// Unchanged status: a heartbeat-only update is not sent.
	h.clock.Step(10 * time.Second)
	l.sync(ctx, false)
	if diff := cmp.Diff([]string{"get nodes"}, h.requests()); diff != "" {
		t.Errorf("unchanged sync requests mismatch (-want +got):\n%s", diff)
	}

	// The report period passed: the heartbeat is sent.
	h.clock.Step(5 * time.Minute)
	l.sync(ctx, false)
	if diff := cmp.Diff([]string{"get nodes", "patch nodes/status"}, h.requests()); diff != "" {
		t.Errorf("report sync requests mismatch (-want +got):\n%s", diff)
	}

	// A change is sent at once, with its event.
	h.clock.Step(10 * time.Second)
	h.setInputs(func(in *Inputs) { in.RuntimeReady = false })
	l.sync(ctx, false)
	if diff := cmp.Diff([]string{"get nodes", "patch nodes/status"}, h.requests()); diff != "" {
		t.Errorf("change sync requests mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NodeNotReady"}, h.rec.take()); diff != "" {
		t.Errorf("change events mismatch (-want +got):\n%s", diff)
	}
	got, err := h.client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := got.Status.Conditions[len(got.Status.Conditions)-1]
	if ready.Type != corev1.NodeReady || ready.Status != corev1.ConditionFalse || ready.Message != "container runtime is down" {
		t.Errorf("stored Ready condition = %+v", ready)
	}
}

func TestControllerReconcilesExistingNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: "node-a", UID: "uid-1", Labels: map[string]string{"kubernetes.io/hostname": "stale", "keep": "me"},
	}}
	h := newHarness(t, existing)
	l := &loop{c: h.ctrl}
	l.sync(ctx, false)
	want := []string{"create nodes", "get nodes", "patch nodes/status", "get nodes", "patch nodes/status"}
	if diff := cmp.Diff(want, h.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	got := h.ctrl.Node()
	if got.UID != "uid-1" || got.Labels["kubernetes.io/hostname"] != "node-a" || got.Labels["keep"] != "me" ||
		got.Annotations[AnnotationControllerManagedAttach] != "true" {
		t.Errorf("reconciled node = %+v", got.ObjectMeta)
	}
	if h.ctrl.NodeUID() != "uid-1" {
		t.Errorf("NodeUID() = %q", h.ctrl.NodeUID())
	}
}

// A Node found at registration while the device manager says the node's
// device state is new has its extended resources zeroed; without that
// verdict they are kept.
func TestControllerResetsExtendedResources(t *testing.T) {
	for _, reset := range []bool{false, true} {
		_, ctx := ktesting.NewTestContext(t)
		gpu := corev1.ResourceList{"example.com/gpu": resource.MustParse("4")}
		existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "uid-1"},
			Status: corev1.NodeStatus{Capacity: gpu, Allocatable: gpu.DeepCopy()}}
		h := newHarness(t, existing)
		h.ctrl.cfg.ResetExtendedResources = func() bool { return reset }
		l := &loop{c: h.ctrl}
		l.sync(ctx, false)
		want := "4"
		if reset {
			want = "0"
		}
		node := h.ctrl.Node()
		c, a := node.Status.Capacity["example.com/gpu"], node.Status.Allocatable["example.com/gpu"]
		if c.String() != want || a.String() != want {
			t.Errorf("reset %v: example.com/gpu capacity %s, allocatable %s, want %s", reset, c.String(), a.String(), want)
		}
	}
}

func TestControllerReRegistersDeletedNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h := newHarness(t)
	l := &loop{c: h.ctrl}
	l.sync(ctx, false)
	h.requests()
	if err := h.client.CoreV1().Nodes().Delete(ctx, "node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.requests()
	h.clock.Step(10 * time.Second)
	l.sync(ctx, false)
	want := []string{"get nodes", "create nodes", "get nodes"}
	if diff := cmp.Diff(want, h.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

func TestControllerRetriesStatusUpdate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	h := newHarness(t)
	l := &loop{c: h.ctrl}
	l.sync(ctx, false)
	h.requests()
	fails := 0
	h.client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, kruntime.Object, error) {
		if fails < 2 {
			fails++
			return true, nil, apierrors.NewInternalError(errors.New("etcd hiccup"))
		}
		return false, nil, nil
	})
	h.setInputs(func(in *Inputs) { in.MaxPods = 10 })
	l.sync(ctx, false)
	// The first try reads the API server's cache, retries read etcd.
	var got []string
	for _, a := range h.client.Actions() {
		if g, ok := a.(k8stesting.GetActionImpl); ok {
			got = append(got, "get rv="+g.GetOptions.ResourceVersion)
			continue
		}
		got = append(got, a.GetVerb())
	}
	want := []string{"get rv=0", "patch", "get rv=", "patch", "get rv=", "patch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if n := h.ctrl.Node(); n.Status.Capacity.Pods().Value() != 10 {
		t.Errorf("published pods capacity = %v, want 10", n.Status.Capacity.Pods())
	}
}

func TestControllerRegistrationBacksOff(t *testing.T) {
	h := newHarness(t)
	creates := 0
	var mu sync.Mutex
	h.client.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, kruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		creates++
		if creates <= 3 {
			return true, nil, apierrors.NewServiceUnavailable("starting")
		}
		return false, nil, nil
	})
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- h.ctrl.Run(ctx) }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return creates }

	for i, wait := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		waitFor(t, fmt.Sprintf("attempt %d", i+1), func() bool { return count() == i+1 && h.clock.HasWaiters() })
		h.clock.Step(wait - time.Millisecond)
		if count() != i+1 {
			t.Fatalf("attempt %d came before %v", i+2, wait)
		}
		h.clock.Step(time.Millisecond)
	}
	waitFor(t, "registration", func() bool { return h.ctrl.Node() != nil })
	// Then a status update every UpdateFrequency after the last one ends.
	waitFor(t, "the update wait", func() bool { return len(h.client.Actions()) == 5 && h.clock.HasWaiters() })
	h.client.ClearActions()
	h.clock.Step(10 * time.Second)
	waitFor(t, "the next update", func() bool { return len(h.client.Actions()) == 1 && h.clock.HasWaiters() })
	if diff := cmp.Diff([]string{"get nodes"}, h.requests()); diff != "" {
		t.Errorf("periodic update requests mismatch (-want +got):\n%s", diff)
	}
	// A kick updates at once, without the clock moving.
	h.setInputs(func(in *Inputs) { in.NetworkReady = false })
	h.ctrl.Kick()
	waitFor(t, "the kicked update", func() bool { return len(h.client.Actions()) == 2 && h.clock.HasWaiters() })
	if diff := cmp.Diff([]string{"get nodes", "patch nodes/status"}, h.requests()); diff != "" {
		t.Errorf("kicked update requests mismatch (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
}

// waitFor polls cond until it holds; the goroutine under test needs real
// scheduling, not time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Errorf("New(empty) = nil error")
	}
	_, err := New(Config{Client: fake.NewClientset(), NodeName: "n", Clock: clocktesting.NewFakeClock(t0),
		Inputs: func(context.Context) Inputs { return Inputs{} }, UpdateFrequency: time.Second})
	if err == nil {
		t.Errorf("New(no report frequency) = nil error")
	}
}

// TestControllerHandsOnPodCIDRs: every status update that reads a Node
// with spec.podCIDRs hands them to PodCIDRs; a Node without any, never.
func TestControllerHandsOnPodCIDRs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cidrs []string
		want  [][]string
	}{
		{name: "none assigned"},
		{name: "dual-stack", cidrs: []string{"10.0.1.0/24", "fd00:1::/64"},
			want: [][]string{{"10.0.1.0/24", "fd00:1::/64"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "uid-1"}, Spec: corev1.NodeSpec{PodCIDRs: tc.cidrs}}
			h := newHarness(t, existing)
			var got [][]string
			h.ctrl.cfg.PodCIDRs = func(_ context.Context, cidrs []string) { got = append(got, cidrs) }
			l := &loop{c: h.ctrl}
			l.sync(ctx, false)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodCIDRs calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestControllerProbesAfterAFailedUpdate: a sync whose five attempts
// failed (the API server away) is followed a second later by a sync of one
// attempt, and so on while it fails; the first that goes through brings
// back the UpdateFrequency period and its five attempts.
func TestControllerProbesAfterAFailedUpdate(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	h := newHarness(t, node)
	var mu sync.Mutex
	down := true
	h.client.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, kruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, apierrors.NewServiceUnavailable("apiserver is restarting")
		}
		return false, nil, nil
	})
	h.ctrl.cfg.Register = false
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- h.ctrl.Run(ctx) }()
	count := func() int { return len(h.client.Actions()) }

	waitFor(t, "the first sync", func() bool { return count() == 5 && h.clock.HasWaiters() })
	h.client.ClearActions()
	h.clock.Step(time.Second - time.Millisecond)
	if n := count(); n != 0 {
		t.Fatalf("%d requests before the probe's second", n)
	}
	h.clock.Step(time.Millisecond)
	waitFor(t, "the failing probe", func() bool { return count() == 1 && h.clock.HasWaiters() })
	if diff := cmp.Diff([]string{"get nodes"}, h.requests()); diff != "" {
		t.Errorf("probe requests mismatch (-want +got):\n%s", diff)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	h.clock.Step(time.Second)
	waitFor(t, "the probe through", func() bool { return count() == 2 && h.clock.HasWaiters() })
	if diff := cmp.Diff([]string{"get nodes", "patch nodes/status"}, h.requests()); diff != "" {
		t.Errorf("requests of the probe that goes through mismatch (-want +got):\n%s", diff)
	}
	h.clock.Step(9 * time.Second)
	if n := count(); n != 0 {
		t.Errorf("%d requests within UpdateFrequency of a sync that went through", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
}
