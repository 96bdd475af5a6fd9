package podworker

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const (
	// DefaultResyncInterval is how long after a successful SyncPod the pod is
	// synced again (the kubelet's syncFrequency), before jitter.
	DefaultResyncInterval = time.Minute
	// DefaultBackoffPeriod is how long after a failed call it is retried,
	// before jitter (the kubelet's backOffPeriod).
	DefaultBackoffPeriod = 10 * time.Second
	// jitterFactor spreads requeues over [d, d*(1+jitterFactor)), as upstream.
	jitterFactor = 0.5
)

// Config is what New needs.
type Config struct {
	Syncer Syncer
	Cache  StatusCache
	Clock  clock.WithTicker
	// ResyncInterval: sync a healthy pod again this long after SyncPod
	// succeeded, plus up to 50% jitter. Zero means DefaultResyncInterval.
	ResyncInterval time.Duration
	// BackoffPeriod: retry this long after a failed call, plus up to 50%
	// jitter. Zero means DefaultBackoffPeriod.
	BackoffPeriod time.Duration
	// Rand returns a number in [0, 1) for jitter and must be safe for
	// concurrent use. Nil: a source private to these Workers, seeded from
	// the clock.
	Rand func() float64
	// ObserveSync, if set, receives after every Syncer call of an update
	// with a StartTime the time since that StartTime, labelled as upstream's
	// pod worker duration: the update type ("create", "update", "sync",
	// "kill"), or "terminated" for SyncTerminatedPod. It is called on the
	// pod's worker goroutine and must not block.
	ObserveSync func(operation string, d time.Duration)
	// ObserveStart, if set, is called as the worker begins the SyncPod of
	// a create update with a StartTime (berth first saw the pod then):
	// upstream's pod worker start latency. It is called on the pod's
	// worker goroutine, with the time now, and must not block.
	ObserveStart func(uid types.UID, firstSeen, now time.Time)
	// Transient, if set, says whether a failed call's error is expected to
	// clear on its own (package transient: a runtime call that timed out,
	// a runtime restarting). Such a call is retried after a short
	// back-off (ShortBackoff, doubling per failure in a row up to
	// BackoffPeriod) instead of BackoffPeriod.
	Transient func(error) bool
	// Waiting, if set, says whether a failed call's error is a wait on
	// another part of the cluster (transient.Waiting: a claim not bound
	// yet). The call is polled: retried after ShortBackoff, doubling per
	// failure in a row up to WaitPoll (at most BackoffPeriod), for as
	// long as the wait lasts.
	Waiting func(error) bool
	// Relist, if set, is called after every SyncPod and SyncTerminatingPod
	// call of a config pod, on the pod's goroutine, once the time the next
	// call's runtime status must be newer than is recorded: the on-demand
	// relist of that pod (pleg.PLEG.RelistPod), so that what the call did
	// to the runtime reaches the cache, the events and the next sync at
	// once instead of at the next periodic relist.
	Relist func(ctx context.Context, uid types.UID)
	// OnFinished, if set, is told about every pod whose worker reached
	// Finished (SyncTerminatedPod succeeded: containers stopped, volumes
	// torn down), once the phase is recorded, so ShouldPodBeFinished is
	// already true. It is called on the pod's worker goroutine and must not
	// block. It wakes; it forgets nothing (that is Gone's).
	OnFinished func(uid types.UID)
	// Gone, if set, is the one "pod gone" signal (podgone.Route.Gone):
	// the workers send it once per worker, when the worker is Finished and
	// its pod is no longer desired: as it finishes, when SyncTerminatedPod
	// reported the pod gone or the worker was a runtime pod's (an orphan
	// kill); else when SyncKnownPods forgets it, its UID no longer desired.
	// A worker forgotten because its UID was created again is not gone.
	// It is called without the Workers' lock, on the pod's worker
	// goroutine or SyncKnownPods' caller, once the worker's phase is
	// recorded.
	Gone func(ctx context.Context, uid types.UID)
}

// Workers runs one goroutine per pod UID. All methods are safe for
// concurrent use; Update, SyncDue, SyncKnownPods and the queries never block
// on a Syncer call. For a given UID at most one Syncer method runs at a time;
// different UIDs run concurrently. The context given to Update bounds the
// goroutines it starts: once it ends the Workers are stopped for good (Wait
// joins the goroutines) and a new Workers is needed to start again.
type Workers struct {
	cfg   Config
	retry retryQueue
	wg    sync.WaitGroup

	// mu guards everything below and every field of every worker.
	mu      sync.Mutex
	workers map[types.UID]*worker
	static  staticGate
	// synced is true once SyncKnownPods ran: from then on every pod that
	// exists has been given to Update, so an unknown UID runs nothing.
	synced bool
}

// worker is the state of one pod UID. Guarded by Workers.mu; the goroutine
// reads and writes it only under that lock.
type worker struct {
	uid   types.UID
	phase Phase
	// pending is the latest update not yet taken by the goroutine (nil: none).
	pending *UpdateOptions
	// active is the update the goroutine took last: the pod it works toward,
	// replayed on resyncs and phase changes.
	active *UpdateOptions
	// wake has capacity 1: a send never blocks and many sends coalesce.
	wake chan struct{}
	// cancel cancels the Syncer call in flight; nil when idle.
	cancel context.CancelFunc
	// gracePeriod is the effective grace period once Terminating (0 before).
	gracePeriod int64
	// killReason and killMessage are the first KillReason (and its
	// message) given once termination was requested.
	killReason, killMessage string
	killNoDisruption        bool
	// fullName is name_namespace for a static pod, "" otherwise.
	fullName string
	// deleted: the pod is gone from config (deletion timestamp, orphan);
	// evicted: it was killed with reason Evicted. Both free its content.
	deleted, evicted bool
	// restartRequested: a Create came for this UID after termination was
	// requested; SyncKnownPods forgets the UID once Finished even if desired.
	restartRequested bool
	// transientFailures counts the calls in a row that failed transiently
	// (Config.Transient); any other outcome resets it.
	transientFailures int
	// gone: the pod was announced gone as the worker finished
	// (Config.Gone); SyncKnownPods does not announce it again.
	gone bool
}

// New validates cfg, fills in defaults and returns idle Workers.
func New(cfg Config) (*Workers, error) {
	if cfg.Syncer == nil || cfg.Cache == nil || cfg.Clock == nil {
		return nil, errors.New("podworker: Syncer, Cache and Clock are required")
	}
	if cfg.ResyncInterval < 0 || cfg.BackoffPeriod < 0 {
		return nil, errors.New("podworker: ResyncInterval and BackoffPeriod must not be negative")
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.BackoffPeriod == 0 {
		cfg.BackoffPeriod = DefaultBackoffPeriod
	}
	if cfg.Rand == nil {
		cfg.Rand = lockedRand(uint64(cfg.Clock.Now().UnixNano()))
	}
	return &Workers{
		cfg:     cfg,
		retry:   retryQueue{due: map[types.UID]time.Time{}},
		workers: map[types.UID]*worker{},
		static:  newStaticGate(),
	}, nil
}

// Wait blocks until every worker goroutine has exited (their contexts ended
// or their pods finished).
func (w *Workers) Wait() { w.wg.Wait() }

// Update hands an update to the worker of its pod UID and returns at once.
// The first update for a UID starts its goroutine, which lives until the pod
// is Finished or ctx ends. Updates not yet taken coalesce: the latest pod
// wins; once termination is requested every update is a kill and the grace
// period can only shrink. A shorter grace period, or a kill while SyncPod
// runs, cancels the call in flight so the worker moves on at once.
//
// An orphan (Pod nil, RuntimePod set) can only be killed: its worker calls
// SyncTerminatingRuntimePod and is then forgotten.
func (w *Workers) Update(ctx context.Context, opts UpdateOptions) {
	uid, ref, ok := identify(opts)
	logger := klog.FromContext(ctx).WithValues("pod", ref, "podUID", uid, "updateType", opts.Type)
	switch {
	case !ok:
		logger.Info("Ignoring pod update without a pod")
		return
	case opts.Pod == nil && opts.Type != SyncPodKill:
		logger.Info("Ignoring runtime pod update: runtime pods can only be killed")
		return
	case opts.Pod != nil:
		opts.RuntimePod = nil
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	wk, known := w.workers[uid]
	if known {
		if !admit(logger, wk, &opts) {
			return
		}
	} else {
		wk = w.startWorker(ctx, uid, opts)
	}
	w.enqueue(logger, wk, opts)
}

// identify returns the UID and a log reference of an update's pod.
func identify(opts UpdateOptions) (types.UID, klog.ObjectRef, bool) {
	switch {
	case opts.Pod != nil:
		return opts.Pod.UID, klog.KObj(opts.Pod), true
	case opts.RuntimePod != nil:
		return opts.RuntimePod.UID, klog.KRef(opts.RuntimePod.Namespace, opts.RuntimePod.Name), true
	}
	return "", klog.ObjectRef{}, false
}

// admit decides whether a known worker takes an update, turning a runtime
// kill into a kill of the config pod the worker knows.
func admit(logger klog.Logger, wk *worker, opts *UpdateOptions) bool {
	if opts.Pod == nil {
		pod := wk.lastPod()
		switch {
		case wk.phase >= Terminated:
			logger.V(3).Info("Ignoring runtime pod kill: the pod worker already stopped its containers")
			return false
		case pod != nil && wk.phase < Terminating:
			// A runtime-only kill is for a runtime pod no worker owns,
			// decided from a listing older than this worker: a pod a
			// source wants, admitted meanwhile. Its own updates (or
			// SyncKnownPods, once no source wants it) end it.
			logger.V(3).Info("Ignoring runtime pod kill: a worker syncs the pod's config")
			return false
		case pod != nil:
			opts.Pod, opts.RuntimePod = pod, nil
		}
	}
	switch {
	case wk.phase >= Terminating && opts.Type == SyncPodCreate:
		// The same UID was created again (a static pod with a fixed UID):
		// it may start only once this one is finished and forgotten.
		wk.restartRequested = true
		logger.V(4).Info("Pod is terminating but was created again with the same UID; it restarts once forgotten", "phase", wk.phase)
		return false
	case wk.phase == Finished:
		logger.V(4).Info("Ignoring update: the pod worker is finished until it is forgotten")
		return false
	}
	return true
}

// startWorker registers a worker for uid and starts its goroutine. Called
// with w.mu held.
func (w *Workers) startWorker(ctx context.Context, uid types.UID, opts UpdateOptions) *worker {
	wk := &worker{uid: uid, phase: Waiting, wake: make(chan struct{}, 1)}
	if opts.Pod != nil && podutil.IsStatic(opts.Pod) {
		wk.fullName = podutil.FullName(opts.Pod)
		w.static.enqueue(wk.fullName, uid)
	}
	w.workers[uid] = wk
	w.wg.Add(1)
	go w.run(ctx, wk)
	return wk
}

// enqueue records opts as the worker's pending update and wakes it. Called
// with w.mu held.
func (w *Workers) enqueue(logger klog.Logger, wk *worker, opts UpdateOptions) {
	before := wk.phase
	wk.phase, _ = Transition(wk.phase, updateEvent(opts))
	shortened := false
	if wk.phase >= Terminating {
		// Once termination is requested every update is a kill; a deletion
		// or an eviction seen at any point frees the pod's content.
		opts.Type = SyncPodKill
		if opts.Pod == nil || opts.Pod.DeletionTimestamp != nil {
			wk.deleted = true
		}
		if opts.KillReason == evictedReason {
			wk.evicted = true
		}
		if wk.killReason == "" && opts.KillReason != "" {
			wk.killReason, wk.killMessage = opts.KillReason, opts.KillMessage
			wk.killNoDisruption = opts.KillNoDisruptionTarget
		}
	}
	if wk.phase == Terminating {
		wk.gracePeriod, shortened = effectiveGracePeriod(wk.gracePeriod, opts.Pod, opts.KillGracePeriod)
	}
	wk.pending = coalesce(wk.pending, opts)
	wk.signal()
	if before != wk.phase {
		logger.V(4).Info("Pod worker phase changed", "from", before, "to", wk.phase)
	}
	if (before < Terminating && wk.phase >= Terminating) || shortened {
		if wk.cancel != nil {
			logger.V(3).Info("Cancelling the pod's current sync", "phase", wk.phase, "gracePeriod", wk.gracePeriod)
			wk.cancel()
		}
	}
}

// evictedReason is the KillReason of an eviction (as upstream's eviction
// manager sets it); an evicted pod's content may be removed at once.
const evictedReason = "Evicted"

// updateEvent classifies an update: a kill, a pod being deleted, a pod in a
// terminal phase and an orphan all request termination.
func updateEvent(opts UpdateOptions) Event {
	switch {
	case opts.Type == SyncPodKill, opts.Pod == nil, opts.Pod.DeletionTimestamp != nil,
		podutil.IsTerminal(opts.Pod.Status.Phase):
		return UpdateKill
	}
	return UpdateSync
}

// coalesce merges next into the update still pending (nil: none). The
// latest pod wins; the strongest type wins (kill > create > update > sync),
// so a pending kill or create is never lost; the earliest StartTime and
// the latest kill reason are kept.
func coalesce(pending *UpdateOptions, next UpdateOptions) *UpdateOptions {
	if pending == nil {
		return &next
	}
	merged := next
	merged.Type = max(pending.Type, next.Type)
	if merged.Pod == nil {
		merged.Pod = pending.Pod
	}
	if merged.RuntimePod == nil && merged.Pod == nil {
		merged.RuntimePod = pending.RuntimePod
	}
	if !pending.StartTime.IsZero() && (merged.StartTime.IsZero() || pending.StartTime.Before(merged.StartTime)) {
		merged.StartTime = pending.StartTime
	}
	if merged.KillReason == "" {
		merged.KillReason, merged.KillMessage = pending.KillReason, pending.KillMessage
		merged.KillNoDisruptionTarget = pending.KillNoDisruptionTarget
	}
	if merged.KillGracePeriod == nil {
		merged.KillGracePeriod = pending.KillGracePeriod
	}
	return &merged
}

// lastPod is the newest config pod the worker knows, or nil for an orphan.
func (wk *worker) lastPod() *corev1.Pod {
	if wk.pending != nil && wk.pending.Pod != nil {
		return wk.pending.Pod
	}
	if wk.active != nil {
		return wk.active.Pod
	}
	return nil
}

// signal wakes the worker goroutine without blocking.
func (wk *worker) signal() {
	select {
	case wk.wake <- struct{}{}:
	default:
	}
}

// replay makes sure the worker has an update to take, re-using the last one
// taken if none is pending, and wakes it. Called with Workers.mu held.
func (wk *worker) replay() {
	if wk.pending == nil {
		if wk.active == nil {
			return
		}
		again := *wk.active
		again.Type, again.StartTime = SyncPodSync, time.Time{}
		if wk.phase >= Terminating {
			again.Type = SyncPodKill
		}
		wk.pending = &again
	}
	wk.signal()
}

// lockedRand returns a goroutine-safe source of numbers in [0, 1).
func lockedRand(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}
