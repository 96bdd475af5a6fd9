package podworker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// step is one Syncer call the worker decided to make.
type step struct {
	action Action
	opts   UpdateOptions
	kill   Kill
}

// orphan reports whether the step concerns a runtime pod with no config.
func (s step) orphan() bool { return s.opts.Pod == nil }

// run is the goroutine of one pod UID: wait for a wake, then take and
// perform pending updates until none is left. It returns when ctx ends or
// the pod is Finished.
func (w *Workers) run(ctx context.Context, wk *worker) {
	defer w.wg.Done()
	// lastSync is when the previous Syncer call returned: the next call
	// needs a runtime status observed after it, so it sees its own effects.
	var lastSync time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-wk.wake:
		}
		for {
			callCtx, s, ok := w.take(ctx, wk)
			if !ok {
				break
			}
			_, ref, _ := identify(s.opts)
			logger := klog.FromContext(ctx).WithValues("pod", ref, "podUID", wk.uid)
			callCtx = klog.NewContext(callCtx, logger)
			w.observeStart(wk.uid, s)
			res, gone, err := w.perform(callCtx, s, lastSync)
			lastSync = w.cfg.Clock.Now()
			if ctx.Err() != nil {
				return
			}
			w.relist(callCtx, s)
			w.observe(s)
			if finished, announce := w.finish(logger, wk, s, res, gone, err); finished {
				if w.cfg.OnFinished != nil {
					w.cfg.OnFinished(wk.uid)
				}
				if announce && w.cfg.Gone != nil {
					w.cfg.Gone(ctx, wk.uid)
				}
				return
			}
		}
	}
}

// take consumes the worker's pending update and decides the call to make.
// ok is false when there is nothing to do: no pending update, or a static
// pod that must keep waiting for its full name (the update stays pending
// and the worker is woken when the name frees). The returned context is
// cancelled by Update when the call must stop early.
func (w *Workers) take(ctx context.Context, wk *worker) (context.Context, step, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wk.pending == nil {
		return nil, step{}, false
	}
	upd := *wk.pending
	next, act := Transition(wk.phase, updateEvent(upd))
	if act == CheckStart {
		if !w.static.allowStart(wk.fullName, wk.uid, w.waitingToStart) {
			klog.FromContext(ctx).V(4).Info("Static pod waits for an older pod with the same full name to finish",
				"pod", klog.KObj(upd.Pod), "podUID", wk.uid, "fullName", wk.fullName)
			return nil, step{}, false
		}
		next, act = Transition(next, StartAllowed)
	}
	wk.phase = next
	wk.pending = nil
	wk.active = &upd
	switch act {
	case CallSyncPod, CallSyncTerminatingPod, CallSyncTerminatedPod:
	default:
		return nil, step{}, false
	}
	callCtx, cancel := context.WithCancel(ctx)
	wk.cancel = cancel
	kill := Kill{GracePeriod: wk.gracePeriod, Reason: wk.killReason, Message: wk.killMessage, NoDisruptionTarget: wk.killNoDisruption}
	return callCtx, step{action: act, opts: upd, kill: kill}, true
}

// perform makes the Syncer call of s, reading the runtime status it needs
// first (an orphan's runtime pod is its status). gone is
// SyncTerminatedPod's word that the pod is gone.
func (w *Workers) perform(ctx context.Context, s step, lastSync time.Time) (res SyncResult, gone bool, err error) {
	if s.orphan() {
		if s.action != CallSyncTerminatingPod {
			return SyncResult{}, false, fmt.Errorf("call %v for runtime pod %q: runtime pods can only be killed", s.action, s.opts.RuntimePod.UID)
		}
		return SyncResult{}, false, w.cfg.Syncer.SyncTerminatingRuntimePod(ctx, s.opts.RuntimePod)
	}
	pod := s.opts.Pod
	rt, err := w.cfg.Cache.GetNewerThan(ctx, pod.UID, lastSync)
	if err != nil {
		return SyncResult{}, false, fmt.Errorf("get runtime status of pod %q: %w", pod.UID, err)
	}
	switch s.action {
	case CallSyncPod:
		res, err = w.cfg.Syncer.SyncPod(ctx, s.opts.Type, pod, rt)
		return res, false, err
	case CallSyncTerminatingPod:
		return SyncResult{}, false, w.cfg.Syncer.SyncTerminatingPod(ctx, pod, rt, s.kill)
	case CallSyncTerminatedPod:
		gone, err = w.cfg.Syncer.SyncTerminatedPod(ctx, pod, rt)
		return SyncResult{}, gone, err
	}
	return SyncResult{}, false, fmt.Errorf("perform %v for pod %q: not a call", s.action, pod.UID)
}

// relist has the pod relisted on demand after a call that may have acted
// on the runtime (see Config.Relist); after lastSync, so the status it
// reads is one the next call accepts.
func (w *Workers) relist(ctx context.Context, s step) {
	if w.cfg.Relist == nil || s.orphan() || ctx.Err() != nil {
		return
	}
	if s.action == CallSyncPod || s.action == CallSyncTerminatingPod {
		w.cfg.Relist(ctx, s.opts.Pod.UID)
	}
}

// observe reports the call's duration since its update arrived.
func (w *Workers) observe(s step) {
	if w.cfg.ObserveSync == nil || s.opts.StartTime.IsZero() {
		return
	}
	w.cfg.ObserveSync(durationLabel(s), w.cfg.Clock.Since(s.opts.StartTime))
}

// observeStart reports the start of a created pod's first sync since berth
// first saw it.
func (w *Workers) observeStart(uid types.UID, s step) {
	if w.cfg.ObserveStart == nil || s.action != CallSyncPod || s.opts.Type != SyncPodCreate || s.opts.StartTime.IsZero() {
		return
	}
	w.cfg.ObserveStart(uid, s.opts.StartTime, w.cfg.Clock.Now())
}

// durationLabel is the operation label of upstream's pod worker duration:
// "terminated" for the final cleanup, else the update type.
func durationLabel(s step) string {
	if s.action == CallSyncTerminatedPod {
		return "terminated"
	}
	return s.opts.Type.String()
}

// resultEvent classifies the outcome of a call. It is pure.
func resultEvent(s step, outcome SyncOutcome, err error) Event {
	switch s.action {
	case CallSyncPod:
		switch {
		case err != nil:
			return SyncFailed
		case outcome == SyncTerminal:
			return SyncReturnedTerminal
		case outcome == SyncAgain:
			return SyncReturnedAgain
		}
		return SyncOK
	case CallSyncTerminatingPod:
		switch {
		case err != nil:
			return TerminatingFailed
		case s.orphan():
			return OrphanTerminatingDone
		}
		return TerminatingDone
	default: // CallSyncTerminatedPod
		if err != nil {
			return TerminatedFailed
		}
		return TerminatedDone
	}
}

// finish records the outcome of a call: the next phase, then either an
// immediate next call (via a replayed update), a requeue (no later than
// the result's WakeAt), or retirement. It returns finished when the pod
// is Finished and the goroutine must exit, and announce when the pod is
// gone now (gone: SyncTerminatedPod said so; or the worker was an
// orphan's), which the caller announces once the lock is released.
func (w *Workers) finish(logger klog.Logger, wk *worker, s step, res SyncResult, gone bool, err error) (finished, announce bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wk.cancel() // release the call's context
	wk.cancel = nil
	ev := resultEvent(s, res.Outcome, err)
	before := wk.phase
	next, act := Transition(wk.phase, ev)
	wk.phase = next
	if before != next {
		logger.V(4).Info("Pod worker phase changed", "from", before, "to", next, "event", ev)
	}
	if next == Terminating && wk.gracePeriod == 0 {
		// Terminating on its own (SyncPod returned terminal): the pod's grace.
		wk.gracePeriod, _ = effectiveGracePeriod(0, wk.lastPod(), nil)
	}

	waiting := act == RequeueBackoff && w.cfg.Waiting != nil && w.cfg.Waiting(err)
	transient := waiting || act == RequeueBackoff && w.cfg.Transient != nil && w.cfg.Transient(err)
	var retryAfter time.Duration
	switch {
	case act == CallSyncPod, act == CallSyncTerminatingPod, act == CallSyncTerminatedPod:
		wk.replay()
	case act == RequeueResync:
		retryAfter = w.jitter(w.cfg.ResyncInterval)
	case waiting:
		retryAfter = w.jitter(shortBackoff(wk.transientFailures, min(WaitPoll, w.cfg.BackoffPeriod)))
	case transient:
		retryAfter = w.jitter(shortBackoff(wk.transientFailures, w.cfg.BackoffPeriod))
	case act == RequeueBackoff:
		retryAfter = w.jitter(w.cfg.BackoffPeriod)
	}
	retryAfter = wakeBy(retryAfter, res.WakeAt, w.cfg.Clock.Now())
	if transient {
		wk.transientFailures++
	} else {
		wk.transientFailures = 0
	}
	switch {
	case wk.pending != nil:
		// A newer update runs right away; it supersedes any requeue.
		w.retry.remove(wk.uid)
	case retryAfter > 0:
		w.retry.add(wk.uid, w.cfg.Clock.Now().Add(retryAfter))
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logger.Error(err, "Pod worker call failed", "call", s.action, "phase", next, "retryAfter", retryAfter)
	}
	if next == Finished {
		wk.gone = s.orphan() || gone
		w.retire(logger, wk)
		return true, wk.gone
	}
	return false, false
}

// wakeBy shortens a requeue delay (0: none) so that it comes no later than
// wakeAt (zero: no bound); a wakeAt already past gives the shortest delay,
// due at the next SyncDue. It is pure.
func wakeBy(delay time.Duration, wakeAt, now time.Time) time.Duration {
	if wakeAt.IsZero() || delay == 0 {
		return delay
	}
	return max(min(delay, wakeAt.Sub(now)), time.Nanosecond)
}

// retire cleans up after a worker reached Finished: it frees a static pod's
// full name (waking the next pod waiting for it) and forgets an orphan at
// once (it has no config to be remembered by; finish announces it gone).
// Called with w.mu held.
func (w *Workers) retire(logger klog.Logger, wk *worker) {
	w.retry.remove(wk.uid)
	w.releaseName(wk)
	if wk.lastPod() == nil {
		delete(w.workers, wk.uid)
	}
	logger.V(4).Info("Pod worker finished")
}

// jitter spreads d over [d, d*(1+jitterFactor)).
func (w *Workers) jitter(d time.Duration) time.Duration {
	return d + time.Duration(w.cfg.Rand()*jitterFactor*float64(d))
}
