package podworker

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// KnownState describes one pod worker for housekeeping.
type KnownState struct {
	Phase Phase
	// Orphan: the UID was not in the desired pods given to SyncKnownPods;
	// the worker is driving it to Finished on its own.
	Orphan bool
	// HasConfig: the worker knows a config pod (false for a runtime-only
	// orphan being killed).
	HasConfig bool
	// Static: the config pod came from a file or URL source.
	Static bool
}

// SyncKnownPods reconciles the workers with the pods the node should have.
// A Finished worker is forgotten when its UID is not desired (the pod is
// gone: announced through Config.Gone, unless it was as the worker
// finished), or when the same UID was created again after it was asked to
// terminate: the caller must then send a Create for every desired pod
// missing from the result. A worker whose UID is not desired and is not
// Finished is terminated (deleted, grace period from its pod) and woken,
// so it finishes on its own.
//
// desired reports whether a UID is desired now (syncloop.Desired.Has). It
// is asked under the workers' lock, so it must not call back into w: the
// sync loop publishes a pod as desired before it gives the pod a worker,
// so every worker this call sees has its pod in the answer, however late
// the caller's round started. A desired view read before the call could
// miss a pod admitted meanwhile and terminate it as an orphan.
//
// It returns every remaining worker's state, so housekeeping can find
// runtime pods no worker owns. After the first call, queries treat an
// unknown UID as one with nothing running.
func (w *Workers) SyncKnownPods(ctx context.Context, desired func(types.UID) bool) map[types.UID]KnownState {
	out, gone := w.syncKnown(desired)
	if w.cfg.Gone != nil {
		for _, uid := range gone {
			w.cfg.Gone(ctx, uid)
		}
	}
	return out
}

// syncKnown is SyncKnownPods under the lock; gone are the pods to announce.
func (w *Workers) syncKnown(want func(types.UID) bool) (out map[types.UID]KnownState, gone []types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.synced = true
	out = make(map[types.UID]KnownState, len(w.workers))
	for uid, wk := range w.workers {
		orphan := !want(uid)
		if orphan || wk.restartRequested {
			if wk.phase == Finished {
				w.forget(wk)
				// A UID created again is desired again, whatever the
				// (older) desired pods say: not gone.
				if orphan && !wk.gone && !wk.restartRequested {
					gone = append(gone, uid)
				}
				continue
			}
			if orphan {
				w.terminateOrphan(wk)
			}
		}
		pod := wk.lastPod()
		out[uid] = KnownState{Phase: wk.phase, Orphan: orphan, HasConfig: pod != nil, Static: pod != nil && podutil.IsStatic(pod)}
	}
	return out, gone
}

// forget drops a Finished worker so its UID may start again. Called with
// w.mu held.
func (w *Workers) forget(wk *worker) {
	delete(w.workers, wk.uid)
	w.retry.remove(wk.uid)
	w.releaseName(wk)
}

// terminateOrphan requests termination of a worker whose pod left the
// desired set, and makes sure it runs. Called with w.mu held.
func (w *Workers) terminateOrphan(wk *worker) {
	wk.deleted = true
	if wk.phase < Terminating {
		wk.phase, _ = Transition(wk.phase, UpdateKill)
		wk.gracePeriod, _ = effectiveGracePeriod(wk.gracePeriod, wk.lastPod(), nil)
		if wk.pending != nil {
			wk.pending.Type = SyncPodKill
		}
		if wk.cancel != nil {
			wk.cancel()
		}
	}
	wk.replay()
}

// Known reports whether a worker has uid now: one was started for it and
// SyncKnownPods has not forgotten it.
func (w *Workers) Known(uid types.UID) bool {
	return w.query(uid, func(*worker) bool { return true }, func(bool) bool { return false })
}

// IsPodTerminationRequested reports whether termination of uid was
// requested (it may still be syncing or terminating). False for unknown UIDs.
func (w *Workers) IsPodTerminationRequested(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool { return wk.phase >= Terminating }, func(bool) bool { return false })
}

// CouldHaveRunningContainers reports whether uid may have running
// containers: true until SyncTerminatingPod succeeded. An unknown UID could
// before the first SyncKnownPods (berth may have just restarted) and cannot
// after it.
func (w *Workers) CouldHaveRunningContainers(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool { return wk.phase < Terminated }, func(synced bool) bool { return !synced })
}

// IsPodKnownTerminated reports whether uid's containers are known to be
// stopped (SyncTerminatingPod succeeded). False for unknown UIDs.
func (w *Workers) IsPodKnownTerminated(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool { return wk.phase >= Terminated }, func(bool) bool { return false })
}

// ShouldPodBeFinished reports whether uid is done on this node
// (SyncTerminatedPod succeeded). An unknown UID is, after the first
// SyncKnownPods.
func (w *Workers) ShouldPodBeFinished(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool { return wk.phase == Finished }, func(synced bool) bool { return synced })
}

// ShouldPodRuntimeBeRemoved reports whether runtime resources of uid other
// than its containers may be torn down: its containers are stopped, or, after
// the first SyncKnownPods, no worker knows it.
func (w *Workers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool { return wk.phase >= Terminated }, func(synced bool) bool { return synced })
}

// ShouldPodContentBeRemoved reports whether everything of uid (volumes,
// directories) may be removed: it was evicted, or it is deleted and its
// containers are stopped, or, after the first SyncKnownPods, no worker
// knows it.
func (w *Workers) ShouldPodContentBeRemoved(uid types.UID) bool {
	return w.query(uid, func(wk *worker) bool {
		return wk.evicted || (wk.deleted && wk.phase >= Terminated)
	}, func(synced bool) bool { return synced })
}

// query evaluates known on uid's worker, or unknown when no worker has
// uid (given whether SyncKnownPods ran), under the lock.
func (w *Workers) query(uid types.UID, known func(*worker) bool, unknown func(synced bool) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wk, ok := w.workers[uid]; ok {
		return known(wk)
	}
	return unknown(w.synced)
}
