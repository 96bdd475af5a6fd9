package podworker

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// guard bounds every wait in these tests; it only fires when a test fails.
const guard = 10 * time.Second

// fakeCall is one Syncer call, as the fake saw it. The test answers it with
// reply; until then the call blocks (or returns ctx.Err() when cancelled).
type fakeCall struct {
	Method  string
	UID     types.UID
	Type    UpdateType // SyncPod only
	Version string     // the pod's ResourceVersion (the runtime pod's name for orphans)
	Grace   int64      // SyncTerminatingPod only
	Reason  string     // SyncTerminatingPod only: Kill.Reason
	// NoDisruption is Kill.NoDisruptionTarget (SyncTerminatingPod only).
	NoDisruption bool

	ctx   context.Context
	reply chan fakeResult
}

type fakeResult struct {
	outcome SyncOutcome
	wakeAt  time.Time
	err     error
	// gone is SyncTerminatedPod's answer.
	gone bool
}

// fakeSyncer hands every call to the test, in order.
type fakeSyncer struct {
	calls chan *fakeCall
}

func newFakeSyncer() *fakeSyncer { return &fakeSyncer{calls: make(chan *fakeCall, 100)} }

func (f *fakeSyncer) do(ctx context.Context, c *fakeCall) (SyncResult, error) {
	r, err := f.doGone(ctx, c)
	return SyncResult{Outcome: r.outcome, WakeAt: r.wakeAt}, err
}

func (f *fakeSyncer) doGone(ctx context.Context, c *fakeCall) (fakeResult, error) {
	c.ctx, c.reply = ctx, make(chan fakeResult, 1)
	f.calls <- c
	select {
	case r := <-c.reply:
		return r, r.err
	case <-ctx.Done():
		return fakeResult{}, ctx.Err()
	}
}

func (f *fakeSyncer) SyncPod(ctx context.Context, t UpdateType, pod *corev1.Pod, _ *runtimestate.Pod) (SyncResult, error) {
	return f.do(ctx, &fakeCall{Method: "SyncPod", UID: pod.UID, Type: t, Version: pod.ResourceVersion})
}

func (f *fakeSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, _ *runtimestate.Pod, kill Kill) error {
	_, err := f.do(ctx, &fakeCall{Method: "SyncTerminatingPod", UID: pod.UID, Version: pod.ResourceVersion, Grace: kill.GracePeriod, Reason: kill.Reason, NoDisruption: kill.NoDisruptionTarget})
	return err
}

func (f *fakeSyncer) SyncTerminatingRuntimePod(ctx context.Context, rt *runtimestate.Pod) error {
	_, err := f.do(ctx, &fakeCall{Method: "SyncTerminatingRuntimePod", UID: rt.UID, Version: rt.Name})
	return err
}

func (f *fakeSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, _ *runtimestate.Pod) (bool, error) {
	r, err := f.doGone(ctx, &fakeCall{Method: "SyncTerminatedPod", UID: pod.UID, Version: pod.ResourceVersion})
	return r.gone, err
}

// fakeCache returns an empty runtime pod and records the minTime asked for.
type fakeCache struct {
	mu       sync.Mutex
	minTimes map[types.UID][]time.Time
}

func (c *fakeCache) GetNewerThan(_ context.Context, uid types.UID, minTime time.Time) (*runtimestate.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.minTimes[uid] = append(c.minTimes[uid], minTime)
	return &runtimestate.Pod{UID: uid}, nil
}

func (c *fakeCache) asked(uid types.UID) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.minTimes[uid]...)
}

type harness struct {
	t      *testing.T
	ctx    context.Context
	w      *Workers
	syncer *fakeSyncer
	cache  *fakeCache
	clock  *testingclock.FakeClock
	// finished receives every OnFinished call.
	finished chan finishedCall
	// relists receives the UID of every Relist call.
	relists chan types.UID
	// gone receives every Gone call.
	gone chan types.UID
}

// finishedCall is one OnFinished call and what ShouldPodBeFinished said
// during it.
type finishedCall struct {
	uid              types.UID
	shouldBeFinished bool
}

// errTransient is the failure the harness's Workers count as transient.
var errTransient = errors.New("runtime call timed out")

// errWaiting is the failure the harness's Workers count as a wait.
var errWaiting = errors.New("PVC is not bound")

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness starts Workers with jitter off (Rand returns 0), a 1m resync
// and a 10s backoff. Cleanup stops every worker and fails on calls nobody
// answered.
func newHarness(t *testing.T) *harness {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := &harness{
		t: t, ctx: ctx, syncer: newFakeSyncer(),
		cache:    &fakeCache{minTimes: map[types.UID][]time.Time{}},
		clock:    testingclock.NewFakeClock(epoch),
		finished: make(chan finishedCall, 100),
		relists:  make(chan types.UID, 100),
		gone:     make(chan types.UID, 100),
	}
	var w *Workers
	w, err := New(Config{
		Syncer: h.syncer, Cache: h.cache, Clock: h.clock,
		ResyncInterval: time.Minute, BackoffPeriod: 10 * time.Second,
		Rand:      func() float64 { return 0 },
		Transient: func(err error) bool { return errors.Is(err, errTransient) },
		Waiting:   func(err error) bool { return errors.Is(err, errWaiting) },
		Relist:    func(_ context.Context, uid types.UID) { h.relists <- uid },
		OnFinished: func(uid types.UID) {
			h.finished <- finishedCall{uid: uid, shouldBeFinished: w.ShouldPodBeFinished(uid)}
		},
		Gone: func(_ context.Context, uid types.UID) { h.gone <- uid },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	t.Cleanup(func() {
		cancel()
		w.Wait()
		close(h.syncer.calls)
		for c := range h.syncer.calls {
			t.Errorf("unexpected call %s(%s) version %q", c.Method, c.UID, c.Version)
		}
	})
	return h
}

// next returns the next Syncer call and checks what it is.
func (h *harness) next(method string, uid types.UID) *fakeCall {
	h.t.Helper()
	select {
	case c := <-h.syncer.calls:
		if c.Method != method || c.UID != uid {
			h.t.Fatalf("next call is %s(%s), want %s(%s)", c.Method, c.UID, method, uid)
		}
		return c
	case <-time.After(guard):
		h.t.Fatalf("no call %s(%s) within %v", method, uid, guard)
	}
	return nil
}

func (c *fakeCall) ok()                   { c.reply <- fakeResult{} }
func (c *fakeCall) removed()              { c.reply <- fakeResult{gone: true} }
func (c *fakeCall) terminal()             { c.reply <- fakeResult{outcome: SyncTerminal} }
func (c *fakeCall) again()                { c.reply <- fakeResult{outcome: SyncAgain} }
func (c *fakeCall) wakeAt(t time.Time)    { c.reply <- fakeResult{wakeAt: t} }
func (c *fakeCall) fail(err error)        { c.reply <- fakeResult{err: err} }
func (c *fakeCall) cancelled() bool       { return c.ctx.Err() != nil }
func (h *harness) update(o UpdateOptions) { h.w.Update(h.ctx, o) }

// waitCancelled waits until the call's context is cancelled.
func (h *harness) waitCancelled(c *fakeCall) {
	h.t.Helper()
	select {
	case <-c.ctx.Done():
	case <-time.After(guard):
		h.t.Fatalf("%s(%s) was not cancelled within %v", c.Method, c.UID, guard)
	}
}

// eventually waits (yielding, never sleeping) until cond holds.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// requeuedAt waits until uid has a requeue time and returns it.
func (h *harness) requeuedAt(uid types.UID) time.Time {
	h.t.Helper()
	var at time.Time
	h.eventually("requeue of "+string(uid), func() bool {
		h.w.retry.mu.Lock()
		defer h.w.retry.mu.Unlock()
		t, ok := h.w.retry.due[uid]
		at = t
		return ok
	})
	return at
}

// waitPhase waits until uid's worker is in phase p (and idle, for Finished).
func (h *harness) waitPhase(uid types.UID, p Phase) {
	h.t.Helper()
	h.eventually("phase "+p.String()+" of "+string(uid), func() bool {
		h.w.mu.Lock()
		defer h.w.mu.Unlock()
		wk, ok := h.w.workers[uid]
		return ok && wk.phase == p && wk.cancel == nil
	})
}

// waitGone waits until no worker has uid.
func (h *harness) waitGone(uid types.UID) {
	h.t.Helper()
	h.eventually("worker "+string(uid)+" gone", func() bool {
		h.w.mu.Lock()
		defer h.w.mu.Unlock()
		_, ok := h.w.workers[uid]
		return !ok
	})
}

type podOpt func(*corev1.Pod)

func newPod(uid, version string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pod-" + uid, Namespace: "default", UID: types.UID(uid), ResourceVersion: version,
			Annotations: map[string]string{podutil.ConfigSourceAnnotation: "api"},
		},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30)},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// static makes the pod come from a manifest file, named name.
func static(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Name = name
		p.Annotations[podutil.ConfigSourceAnnotation] = "file"
	}
}

func deleting(grace int64) podOpt {
	return func(p *corev1.Pod) {
		now := metav1.NewTime(epoch)
		p.DeletionTimestamp = &now
		p.DeletionGracePeriodSeconds = &grace
	}
}

func metaWithDeletionGrace(grace *int64) metav1.ObjectMeta {
	return metav1.ObjectMeta{DeletionGracePeriodSeconds: grace}
}
