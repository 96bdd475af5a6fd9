package statussync

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

const waitLimit = 30 * time.Second

// env runs a Syncer against the fake clientset, with the informer's view
// read straight from the fake's tracker.
type env struct {
	t      *testing.T
	cs     *fake.Clientset
	store  *podstatus.Store
	clock  *testclock.FakeClock
	s      *Syncer
	passes chan bool

	// mu guards static, finished and lookups.
	mu       sync.Mutex
	static   map[types.UID]*corev1.Pod
	finished map[types.UID]bool
	// lookups counts the syncer's config pod lookups (Config.Pod) by UID:
	// the pods a pass planned.
	lookups map[types.UID]int
	// stale, when it has the UID, is the API source's view of the pod,
	// which then never sees the writes.
	stale map[types.UID]*corev1.Pod
}

func newEnv(t *testing.T, objs ...runtime.Object) *env {
	clk := testclock.NewFakeClock(now)
	e := &env{
		t: t, cs: fake.NewClientset(objs...), store: podstatus.NewStore(clk),
		clock: clk, passes: make(chan bool, 100),
		static: map[types.UID]*corev1.Pod{}, finished: map[types.UID]bool{}, lookups: map[types.UID]int{},
		stale: map[types.UID]*corev1.Pod{},
	}
	s, err := New(Config{
		Client: e.cs, Store: e.store, Clock: e.clock,
		Pod:          e.pod,
		MirrorPod:    e.mirrorPod,
		CanBeDeleted: func(uid types.UID) bool { e.mu.Lock(); defer e.mu.Unlock(); return e.finished[uid] },
	})
	if err != nil {
		t.Fatal(err)
	}
	s.afterPass = func(periodic bool) { e.passes <- periodic }
	e.s = s
	return e
}

func (e *env) pod(uid types.UID) (*corev1.Pod, bool) {
	e.mu.Lock()
	e.lookups[uid]++
	if p, ok := e.stale[uid]; ok {
		e.mu.Unlock()
		return p, true
	}
	p, ok := e.static[uid]
	e.mu.Unlock()
	if ok {
		return p, true
	}
	list, err := e.cs.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), "")
	if err != nil {
		e.t.Errorf("list pods: %v", err)
		return nil, false
	}
	for i := range list.(*corev1.PodList).Items {
		if p := &list.(*corev1.PodList).Items[i]; p.UID == uid {
			return p, true
		}
	}
	return nil, false
}

func (e *env) mirrorPod(static *corev1.Pod) (*corev1.Pod, bool) {
	p, err := e.apiPod(static.Namespace, static.Name)
	return p, err == nil
}

func (e *env) apiPod(namespace, name string) (*corev1.Pod, error) {
	obj, err := e.cs.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// start runs the syncer until the test ends and waits for its first pass.
func (e *env) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.s.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run = %v", err)
		}
	})
	e.waitPass(true)
}

func (e *env) waitPass(wantPeriodic bool) {
	e.t.Helper()
	select {
	case periodic := <-e.passes:
		if periodic != wantPeriodic {
			e.t.Fatalf("pass periodic = %v, want %v", periodic, wantPeriodic)
		}
	case <-time.After(waitLimit):
		e.t.Fatal("no pass")
	}
}

// failPatches makes the next n status patches fail with err; later ones
// go through. The reactor runs on the syncer's goroutine alone.
func (e *env) failPatches(n int, err error) {
	e.cs.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		if n > 0 {
			n--
			return true, nil, err
		}
		return false, nil, nil
	})
}

// tick moves the fake clock one sync period and waits for the full pass.
func (e *env) tick() {
	e.t.Helper()
	e.clock.Step(DefaultSyncPeriod)
	e.waitPass(true)
}

// requests returns the verbs of the requests sent since the last call,
// as "verb resource/subresource ns/name".
func (e *env) requests() []string {
	var out []string
	for _, a := range e.cs.Actions() {
		r := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		name := ""
		if a, ok := a.(interface{ GetName() string }); ok { // get, patch, delete
			name = a.GetName()
		}
		out = append(out, r+" "+a.GetNamespace()+"/"+name)
	}
	e.cs.ClearActions()
	return out
}

func TestRunWritesChanges(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	e.start()
	if got := e.requests(); len(got) != 0 {
		t.Fatalf("requests with an empty store: %v", got)
	}

	// A first write patches from the API source's view of the pod,
	// without reading it.
	e.store.Set("u1", running())
	e.waitPass(false)
	want := []string{"patch pods/status default/web"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	got, err := e.apiPod("default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if !equal(got.Status, running()) {
		t.Errorf("API status = %+v, want the running status", got.Status)
	}

	// The same status again: no signal; a wake or a full pass finds
	// nothing to write either.
	e.store.Set("u1", running())
	e.s.Wake("u1")
	e.waitPass(false)
	e.tick()
	if got := e.requests(); len(got) != 0 {
		t.Errorf("requests for an unchanged status: %v", got)
	}

	// Someone overwrote the status: the full pass reads the pod and puts
	// it back.
	want = []string{"get pods default/web", "patch pods/status default/web"}
	e.patchAPIStatus("web", corev1.PodStatus{Phase: corev1.PodPending})
	e.tick()
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Errorf("reconcile requests (-want +got):\n%s", diff)
	}
}

func (e *env) patchAPIStatus(name string, st corev1.PodStatus) {
	e.t.Helper()
	p, err := e.apiPod("default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	p = withStatus(p, st)
	if err := e.cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, "default"); err != nil {
		e.t.Fatal(err)
	}
}

func TestRunPatchShape(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	var patch clienttesting.PatchAction
	e.cs.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		patch = a.(clienttesting.PatchAction)
		return false, nil, nil
	})
	e.start()
	e.store.Set("u1", running())
	e.waitPass(false)
	if patch == nil {
		t.Fatal("no patch")
	}
	if patch.GetPatchType() != types.StrategicMergePatchType || patch.GetSubresource() != "status" {
		t.Errorf("patch type %s subresource %q, want a strategic merge patch of status", patch.GetPatchType(), patch.GetSubresource())
	}
	var body struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Metadata.UID != "u1" || body.Status["phase"] != "Running" {
		t.Errorf("patch %s: want metadata.uid u1 and phase Running", patch.GetPatch())
	}
}

func TestRunRetriesAfterAnError(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	e.failPatches(1, apierrors.NewServiceUnavailable("apiserver is restarting"))
	e.start()
	e.store.Set("u1", running())
	e.waitPass(false)
	if p, _ := e.apiPod("default", "web"); p.Status.Phase != corev1.PodPending {
		t.Fatalf("phase %s after a failed patch", p.Status.Phase)
	}
	e.requests()

	// The probe, RetryInterval later, writes it.
	e.clock.Step(RetryInterval)
	e.waitPass(false)
	want := []string{"get pods default/web", "patch pods/status default/web"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Errorf("retry requests (-want +got):\n%s", diff)
	}
	if p, _ := e.apiPod("default", "web"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s after the retry, want Running", p.Status.Phase)
	}
}

func TestRunDeletesFinishedPodOnce(t *testing.T) {
	e := newEnv(t, deleting(withStatus(apiPod("u1", ""), running())))
	var deletes []metav1.DeleteOptions
	e.cs.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		deletes = append(deletes, a.(clienttesting.DeleteAction).GetDeleteOptions())
		return true, nil, nil // the pod stays, as with a finalizer
	})
	e.start()

	// Terminal, but the pod workers are not done: no deletion yet.
	e.store.Set("u1", failed())
	e.waitPass(false)
	if len(deletes) != 0 {
		t.Fatalf("deleted before the pod workers finished: %v", deletes)
	}
	e.mu.Lock()
	e.finished["u1"] = true
	e.mu.Unlock()
	e.s.Wake("u1")
	e.waitPass(false)
	e.tick()
	e.s.Wake("u1")
	e.waitPass(false)
	want := []metav1.DeleteOptions{{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions("u1")}}
	if diff := cmp.Diff(want, deletes); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
}

func TestRunHoldsTerminalPhase(t *testing.T) {
	e := newEnv(t, withStatus(apiPod("u1", ""), failed()))
	e.start()
	e.store.Set("u1", running())
	e.waitPass(false)
	e.tick()
	for _, r := range e.requests() {
		if r == "patch pods/status default/web" {
			t.Fatal("patched a pod out of its terminal phase")
		}
	}
}

func TestRunStaticPodGoesToItsMirror(t *testing.T) {
	static := staticPod("hash1")
	e := newEnv(t)
	e.static["hash1"] = static
	e.start()
	e.store.Set("hash1", running())
	e.waitPass(false)
	if got := e.requests(); len(got) != 0 {
		t.Fatalf("requests without a mirror pod: %v", got)
	}

	// An outdated mirror pod is not written to.
	old := mirrorOf(static, "m0", corev1.PodPending)
	old.Annotations["kubernetes.io/config.mirror"] = "old-hash"
	if err := e.cs.Tracker().Add(old); err != nil {
		t.Fatal(err)
	}
	e.tick()
	if got := e.requests(); len(got) != 0 {
		t.Fatalf("requests with an outdated mirror pod: %v", got)
	}

	if err := e.cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "kube-system", static.Name); err != nil {
		t.Fatal(err)
	}
	if err := e.cs.Tracker().Add(mirrorOf(static, "m1", corev1.PodPending)); err != nil {
		t.Fatal(err)
	}
	e.tick()
	want := []string{"get pods kube-system/etcd-node1", "patch pods/status kube-system/etcd-node1"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	if p, _ := e.apiPod("kube-system", static.Name); p.Status.Phase != corev1.PodRunning || p.UID != "m1" {
		t.Errorf("mirror pod %s phase %s, want m1 Running", p.UID, p.Status.Phase)
	}
}

func TestRunForgetsPodsGoneFromTheServer(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	notFound := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(corev1.Resource("pods"), "web")
	}
	e.cs.PrependReactor("get", "pods", notFound)
	e.cs.PrependReactor("patch", "pods", notFound)
	e.start()
	e.store.Set("u1", running())
	e.waitPass(false)
	if diff := cmp.Diff([]string{"patch pods/status default/web"}, e.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if len(e.s.records) != 0 {
		t.Errorf("records left after the pod was gone: %v", e.s.records)
	}
	// The full pass reads the pod, finds it gone, and writes nothing.
	e.tick()
	if diff := cmp.Diff([]string{"get pods default/web"}, e.requests()); diff != "" {
		t.Errorf("requests of the full pass (-want +got):\n%s", diff)
	}
	e.store.Forget(context.Background(), "u1")
	e.waitPass(false)
	e.tick()
	if len(e.s.records) != 0 {
		t.Errorf("records left: %v", e.s.records)
	}
}

// TestForgetDropsTheRecords: once a pod is gone (the store and the syncer
// told by the route), the next pass holds nothing of it, periodic or not.
func TestForgetDropsTheRecords(t *testing.T) {
	e := newEnv(t, apiPod("u1", corev1.PodPending))
	e.start()
	e.store.Set("u1", running())
	e.waitPass(false)
	if len(e.s.records) != 1 || len(e.s.pending) != 1 {
		t.Fatalf("after a write: records %v, pending %v; want u1's", e.s.records, e.s.pending)
	}
	// The syncer is told first: the store's Forget wakes a pass, which
	// must find the syncer told (told the other way round, a pass the
	// store woke may run before the syncer's Forget and keep the records
	// until the next one).
	ctx := context.Background()
	e.s.Forget(ctx, "u1")
	e.store.Forget(ctx, "u1")
	e.waitPass(false)
	if len(e.s.records) != 0 || len(e.s.pending) != 0 || len(e.s.carry) != 0 {
		t.Errorf("after Forget: records %v, pending %v, carry %v; want none", e.s.records, e.s.pending, e.s.carry)
	}
}

func TestNewValidates(t *testing.T) {
	_, err := New(Config{})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("New(Config{}) = %v, want an error", err)
	}
}

// TestProbePlansOneFailedPod: while the API server fails every write, a
// probe pass tries one of the failed pods alone (one read and one patch,
// not one of each pod) and keeps the others unsettled; once it goes
// through, the next pass writes the others.
func TestProbePlansOneFailedPod(t *testing.T) {
	e := newEnv(t, namedPod("u1", "web-1"), namedPod("u2", "web-2"), namedPod("u3", "web-3"))
	e.failPatches(4, apierrors.NewServiceUnavailable("apiserver is restarting"))
	ctx := context.Background()
	for _, uid := range []types.UID{"u1", "u2", "u3"} {
		e.store.Set(uid, running())
	}
	if !e.s.pass(ctx, true, false) {
		t.Fatal("a pass whose three patches failed reported no failure")
	}
	e.requests()
	if !e.s.pass(ctx, false, true) {
		t.Fatal("the failing probe reported no failure")
	}
	want := []string{"get pods default/web-1", "patch pods/status default/web-1"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Errorf("requests of the failing probe (-want +got):\n%s", diff)
	}
	if len(e.s.carry) != 3 {
		t.Errorf("unsettled after the failing probe: %v, want all three", e.s.carry)
	}
	if e.s.pass(ctx, false, true) {
		t.Fatal("the probe failed once the API server was back")
	}
	if p, _ := e.apiPod("default", "web-1"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("web-1 phase %s after the probe, want Running", p.Status.Phase)
	}
	if len(e.s.carry) != 2 {
		t.Errorf("unsettled after the probe went through: %v, want web-2's and web-3's", e.s.carry)
	}
	if e.s.pass(ctx, false, false) {
		t.Fatal("the pass after the probe failed")
	}
	for _, name := range []string{"web-2", "web-3"} {
		if p, _ := e.apiPod("default", name); p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s phase %s after the pass that follows the probe, want Running", name, p.Status.Phase)
		}
	}
}
