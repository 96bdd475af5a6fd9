package syncloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// recorder is a fake Workers that hands every call to the test.
type recorder struct {
	calls chan string
}

func (r *recorder) Update(_ context.Context, o podworker.UpdateOptions) {
	name := "<runtime>"
	if o.Pod != nil {
		name = o.Pod.Name
	}
	s := o.Type.String() + " " + name
	if o.KillGracePeriod != nil {
		s += " grace=" + time.Duration(*o.KillGracePeriod*int64(time.Second)).String()
	}
	r.calls <- s
}

func (r *recorder) SyncDue(context.Context) { r.calls <- "syncDue" }

func (r *recorder) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for a worker call")
		return ""
	}
}

func pod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid}}
}

type harness struct {
	loop    *Loop
	clock   *clocktesting.FakeClock
	updates chan podsource.Update
	events  chan pleg.Event
	probes  chan types.UID
	health  chan types.UID
	claims  chan types.UID
	workers *recorder
	house   chan []*corev1.Pod
	admit   chan string
	// resize gets "name in desired-pod-names" for every Resize call, and
	// ", was <generation>" when it has the spec the update replaces.
	resize chan string
	// reconciled gets, for every Reconciled call, "name old-phase>new-phase"
	// of each pod, with the desired pods' names.
	reconciled chan string
	// mu guards rtErr.
	mu    sync.Mutex
	rtErr error
}

func start(t *testing.T) *harness {
	t.Helper()
	return startWith(t, nil)
}

// startWith starts the loop with the runtime reporting rtErr from its first
// iteration.
func startWith(t *testing.T, rtErr error) *harness {
	t.Helper()
	h := &harness{
		rtErr:      rtErr,
		clock:      clocktesting.NewFakeClock(time.Unix(1000, 0)),
		updates:    make(chan podsource.Update),
		events:     make(chan pleg.Event),
		probes:     make(chan types.UID),
		health:     make(chan types.UID),
		claims:     make(chan types.UID),
		workers:    &recorder{calls: make(chan string, 100)},
		house:      make(chan []*corev1.Pod, 10),
		admit:      make(chan string, 10),
		resize:     make(chan string, 10),
		reconciled: make(chan string, 10),
	}
	loop, err := New(Config{
		Updates: h.updates, Events: h.events, ProbeResults: h.probes, ResourceUpdates: h.health, ClaimUpdates: h.claims, Workers: h.workers, Clock: h.clock,
		Housekeeping: func(context.Context) { h.house <- h.loop.Pods() },
		Admit: func(_ context.Context, p *corev1.Pod, others []*corev1.Pod) {
			h.admit <- p.Name + " after " + strings.Join(names(others), ",")
		},
		Resize: func(_ context.Context, old, p *corev1.Pod) {
			got := p.Name + " in " + strings.Join(names(h.loop.Pods()), ",")
			if old != nil {
				got += fmt.Sprintf(", was %d", old.Generation)
			}
			h.resize <- got
		},
		Reconciled: func(_ context.Context, changes [][2]*corev1.Pod) {
			var got []string
			for _, c := range changes {
				got = append(got, fmt.Sprintf("%s %s>%s", c[1].Name, c[0].Status.Phase, c[1].Status.Phase))
			}
			h.reconciled <- strings.Join(got, ",") + " in " + strings.Join(names(h.loop.Pods()), ",")
		},
		RuntimeErr: func() error {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.rtErr
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.loop = loop
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

func (h *harness) send(u podsource.Update) { h.updates <- u }

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestDispatchSourceUpdates(t *testing.T) {
	h := start(t)
	a, b := pod("a", "ua"), pod("b", "ub")
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{b, a}})
	got := []string{h.workers.next(t), h.workers.next(t)}
	// Same creation time: admitted and dispatched in full-name order.
	if diff := cmp.Diff([]string{"create a", "create b"}, got); diff != "" {
		t.Errorf("add (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names(h.loop.Pods())); diff != "" {
		t.Errorf("desired pods (-want +got):\n%s", diff)
	}

	a2 := a.DeepCopy()
	a2.Labels = map[string]string{"v": "2"}
	h.send(podsource.Update{Op: podsource.OpUpdate, Pods: []*corev1.Pod{a2}})
	if got := h.workers.next(t); got != "update a" {
		t.Errorf("update: got %q", got)
	}
	if p, ok := h.loop.Desired().Pod("ua"); !ok || p.Labels["v"] != "2" {
		t.Errorf("Pod(ua) = %v, %v; want the updated pod", p, ok)
	}

	// A status-only change needs no work.
	h.send(podsource.Update{Op: podsource.OpReconcile, Pods: []*corev1.Pod{a2}})
	del := b.DeepCopy()
	del.DeletionTimestamp = &metav1.Time{Time: h.clock.Now()}
	del.DeletionGracePeriodSeconds = ptr.To[int64](5)
	h.send(podsource.Update{Op: podsource.OpDelete, Pods: []*corev1.Pod{del}})
	if got := h.workers.next(t); got != "kill b grace=5s" {
		t.Errorf("delete: got %q", got)
	}
	if _, ok := h.loop.Desired().Pod("ub"); !ok {
		t.Errorf("a pod being deleted gracefully must stay desired until removed")
	}
	h.send(podsource.Update{Op: podsource.OpRemove, Pods: []*corev1.Pod{del}})
	if got := h.workers.next(t); got != "kill b" {
		t.Errorf("remove: got %q", got)
	}
	if diff := cmp.Diff([]string{"a"}, names(h.loop.Pods())); diff != "" {
		t.Errorf("desired pods after remove (-want +got):\n%s", diff)
	}
}

func TestPLEGEventsWakeKnownPodsOnly(t *testing.T) {
	h := start(t)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
	h.workers.next(t)
	h.events <- pleg.Event{ID: "unknown", Type: pleg.ContainerDied}
	h.events <- pleg.Event{ID: "ua", Type: pleg.ContainerDied}
	if got := h.workers.next(t); got != "sync a" {
		t.Errorf("got %q, want sync a (and nothing for the unknown pod)", got)
	}
}

func TestReconcileSyncsPodsWhoseReadinessGateChanged(t *testing.T) {
	h := start(t)
	a := pod("a", "ua")
	a.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{a}})
	h.workers.next(t)
	// The API shows Ready=False and the gate still unset: consistent.
	a2 := a.DeepCopy()
	a2.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady",
		Message: "corresponding condition of pod readiness gate \"example.com/gate\" does not exist."}}
	h.send(podsource.Update{Op: podsource.OpReconcile, Pods: []*corev1.Pod{a2}})
	a2 = a2.DeepCopy()
	a2.Labels = map[string]string{"v": "2"}
	h.send(podsource.Update{Op: podsource.OpUpdate, Pods: []*corev1.Pod{a2}})
	if got := h.workers.next(t); got != "update a" {
		t.Fatalf("got %q, want update a (a consistent status needs no sync)", got)
	}
	// Another controller set the gate: Ready must follow.
	a3 := a2.DeepCopy()
	a3.Status.Conditions = append(a3.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue})
	h.send(podsource.Update{Op: podsource.OpReconcile, Pods: []*corev1.Pod{a3}})
	if got := h.workers.next(t); got != "sync a" {
		t.Errorf("got %q, want sync a after the gate changed", got)
	}
}

func TestProbeResultsWakeKnownPodsOnly(t *testing.T) {
	h := start(t)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
	h.workers.next(t)
	h.probes <- "unknown"
	h.probes <- "ua"
	if got := h.workers.next(t); got != "sync a" {
		t.Errorf("got %q, want sync a (and nothing for the unknown pod)", got)
	}
}

func TestResourceUpdatesWakeKnownPodsOnly(t *testing.T) {
	h := start(t)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
	h.workers.next(t)
	h.health <- "unknown"
	h.health <- "ua"
	if got := h.workers.next(t); got != "sync a" {
		t.Errorf("got %q, want sync a (and nothing for the unknown pod)", got)
	}
}

// TestClaimUpdatesWakeKnownPodsOnly: the DRA manager's health updates
// sync a known pod as the device manager's do.
func TestClaimUpdatesWakeKnownPodsOnly(t *testing.T) {
	h := start(t)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
	h.workers.next(t)
	h.claims <- "unknown"
	h.claims <- "ua"
	if got := h.workers.next(t); got != "sync a" {
		t.Errorf("got %q, want sync a (and nothing for the unknown pod)", got)
	}
}

func TestTicksDispatchResyncAndHousekeeping(t *testing.T) {
	h := start(t)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
	h.workers.next(t)
	h.clock.Step(time.Second)
	if got := h.workers.next(t); got != "syncDue" {
		t.Errorf("resync tick: got %q", got)
	}
	h.clock.Step(time.Second)
	h.workers.next(t) // the second resync tick
	select {
	case desired := <-h.house:
		if diff := cmp.Diff([]string{"a"}, names(desired)); diff != "" {
			t.Errorf("housekeeping desired (-want +got):\n%s", diff)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("housekeeping did not run on its tick")
	}
}

func TestRuntimeErrorHoldsDispatch(t *testing.T) {
	// The runtime is down from the loop's first iteration, so the loop is
	// parked in its backoff wait (not in a select it entered while the
	// runtime was healthy); an update sent now is taken only once the
	// runtime is healthy again.
	h := startWith(t, errors.New("container runtime is down"))
	sent := make(chan struct{})
	go func() {
		h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}})
		close(sent)
	}()
	for i := 0; i < 5; i++ {
		waitForWaiters(t, h.clock)
		h.clock.Step(maxBackoff)
	}
	select {
	case <-sent:
		t.Fatal("the loop took a pod update while the runtime was down")
	default:
	}
	h.mu.Lock()
	h.rtErr = nil
	h.mu.Unlock()
	for {
		select {
		case <-sent:
			for {
				if got := h.workers.next(t); got != "syncDue" {
					if got != "create a" {
						t.Errorf("got %q, want create a", got)
					}
					return
				}
			}
		case <-time.After(10 * time.Millisecond):
			h.clock.Step(maxBackoff)
		}
	}
}

// waitForWaiters waits until something waits on the fake clock.
func waitForWaiters(t *testing.T, c *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !c.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("nothing waits on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAdmissionInCreationOrder(t *testing.T) {
	h := start(t)
	// a-young sorts first by name but was created after b-old.
	young, old := pod("a-young", "uy"), pod("b-old", "uo")
	young.CreationTimestamp = metav1.Unix(20, 0)
	old.CreationTimestamp = metav1.Unix(10, 0)
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{young, old}})
	for _, want := range []string{"b-old after ", "a-young after b-old"} {
		select {
		case got := <-h.admit:
			if got != want {
				t.Errorf("admit: got %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("admission not asked")
		}
	}
	if a, b := h.workers.next(t), h.workers.next(t); a != "create b-old" || b != "create a-young" {
		t.Errorf("dispatch order %q, %q", a, b)
	}
	// Updates of known pods are not admitted again.
	h.send(podsource.Update{Op: podsource.OpUpdate, Pods: []*corev1.Pod{old}})
	h.workers.next(t)
	select {
	case got := <-h.admit:
		t.Errorf("update admitted again: %q", got)
	default:
	}
}

func TestMirrorPodsWakeTheirStaticPod(t *testing.T) {
	h := start(t)
	static := pod("web-node", "static-uid")
	static.Annotations = map[string]string{podutil.ConfigSourceAnnotation: podutil.FileSource}
	h.send(podsource.Update{Op: podsource.OpAdd, Source: podutil.FileSource, Pods: []*corev1.Pod{static}})
	h.workers.next(t)

	mirror := pod("web-node", "mirror-uid")
	mirror.Annotations = map[string]string{podutil.ConfigMirrorAnnotation: "static-uid"}
	h.send(podsource.Update{Op: podsource.OpAdd, Source: podutil.APISource, Pods: []*corev1.Pod{mirror}})
	if got := h.workers.next(t); got != "sync web-node" {
		t.Errorf("mirror add: got %q, want a sync of the static pod", got)
	}
	if m, ok := h.loop.Desired().MirrorPod("web-node_default"); !ok || m.UID != "mirror-uid" {
		t.Errorf("MirrorPod = %v, %v", m, ok)
	}
	if _, ok := h.loop.Desired().Pod("mirror-uid"); ok {
		t.Error("a mirror pod must not be desired")
	}
	h.send(podsource.Update{Op: podsource.OpRemove, Source: podutil.APISource, Pods: []*corev1.Pod{mirror}})
	if got := h.workers.next(t); got != "sync web-node" {
		t.Errorf("mirror remove: got %q, want a sync of the static pod", got)
	}
	if _, ok := h.loop.Desired().MirrorPod("web-node_default"); ok {
		t.Error("removed mirror pod still published")
	}
}

// TestSlowHousekeepingDoesNotDelayDispatch: housekeeping stuck on a slow
// runtime (here: blocked until the test releases it) does not hold up the
// dispatch of a pod update; ticks that come meanwhile give another round
// once it is done, and rounds never overlap.
func TestSlowHousekeepingDoesNotDelayDispatch(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	updates := make(chan podsource.Update)
	workers := &recorder{calls: make(chan string, 100)}
	entered := make(chan struct{}, 10)
	release := make(chan struct{})
	var running, overlapped atomic.Int32
	loop, err := New(Config{
		Updates: updates, Workers: workers, Clock: clk,
		Housekeeping: func(ctx context.Context) {
			if running.Add(1) > 1 {
				overlapped.Add(1)
			}
			defer running.Add(-1)
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	waitForWaiters(t, clk)
	clk.Step(2 * time.Second) // resync and housekeeping ticks
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("housekeeping did not start on its tick")
	}
	if got := workers.next(t); got != "syncDue" {
		t.Fatalf("got %q, want syncDue", got)
	}
	// Housekeeping is blocked; a pod update is still dispatched.
	sent := make(chan struct{})
	go func() {
		updates <- podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}}
		close(sent)
	}()
	if got := workers.next(t); got != "create a" {
		t.Fatalf("got %q, want create a while housekeeping is blocked", got)
	}
	<-sent
	// Ticks while blocked give one more round once it is done.
	clk.Step(2 * time.Second)
	close(release)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no housekeeping round after the blocked one")
	}
	if n := overlapped.Load(); n != 0 {
		t.Errorf("%d housekeeping rounds overlapped another", n)
	}
}

// TestObserveUpdateSeesUpdatesBeforeDispatch: the observer sees each source
// update in the loop's goroutine, before its pods reach the workers.
func TestObserveUpdateSeesUpdatesBeforeDispatch(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	updates := make(chan podsource.Update)
	workers := &recorder{calls: make(chan string, 100)}
	seen := make(chan string, 10)
	loop, err := New(Config{
		Updates: updates, Workers: workers, Clock: clk,
		ObserveUpdate: func(u podsource.Update) { seen <- u.Op.String() + " " + strings.Join(names(u.Pods), ",") },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	defer func() { cancel(); _ = <-done }()
	updates <- podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{pod("a", "ua")}}
	if got := workers.next(t); got != "create a" {
		t.Fatalf("got %q, want create a", got)
	}
	select {
	case got := <-seen:
		if got != "ADD a" {
			t.Errorf("observed %q, want ADD a", got)
		}
	default:
		t.Error("the update reached the workers without being observed first")
	}
}

// TestResizeAfterPublish: every added and updated pod is handed to Resize,
// with the spec it replaces if any, once the desired set that holds it is
// published and before its worker hears of it; a status-only reconcile is
// not.
func TestResizeAfterPublish(t *testing.T) {
	h := start(t)
	a := pod("a", "ua")
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{a}})
	if got := <-h.resize; got != "a in a" {
		t.Errorf("resize on add: %q", got)
	}
	h.workers.next(t)
	h.send(podsource.Update{Op: podsource.OpReconcile, Pods: []*corev1.Pod{a}})
	b := pod("b", "ub")
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{b}})
	if got := <-h.resize; got != "b in a,b" {
		t.Errorf("resize after a reconcile and an add: %q, want only b's", got)
	}
	h.workers.next(t)
	a2 := a.DeepCopy()
	a2.Generation = a.Generation + 1
	h.send(podsource.Update{Op: podsource.OpUpdate, Pods: []*corev1.Pod{a2}})
	if got, want := <-h.resize, fmt.Sprintf("a in a,b, was %d", a.Generation); got != want {
		t.Errorf("resize on update: %q, want %q", got, want)
	}
	if got := h.workers.next(t); got != "update a" {
		t.Errorf("worker after resize: %q", got)
	}
}

// TestReconciledAfterPublish: the known pods of a reconcile (a status-only
// change) are handed to Reconciled together, each with the pod it
// replaces, once the desired set is published; a pod new to berth in a
// reconcile is admitted instead.
func TestReconciledAfterPublish(t *testing.T) {
	h := start(t)
	a, b := pod("a", "ua"), pod("b", "ub")
	h.send(podsource.Update{Op: podsource.OpAdd, Pods: []*corev1.Pod{a, b}})
	h.workers.next(t)
	h.workers.next(t)
	a2, b2, c := a.DeepCopy(), b.DeepCopy(), pod("c", "uc")
	a2.Status.Phase, b2.Status.Phase = corev1.PodRunning, corev1.PodSucceeded
	h.send(podsource.Update{Op: podsource.OpReconcile, Pods: []*corev1.Pod{a2, c, b2}})
	if got, want := <-h.reconciled, "a >Running,b >Succeeded in a,b,c"; got != want {
		t.Errorf("reconciled %q, want %q", got, want)
	}
}
