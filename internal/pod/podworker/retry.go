package podworker

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// ShortBackoff is the retry delay after a first transient failure; it
// doubles with every further one in a row.
const ShortBackoff = 200 * time.Millisecond

// WaitPoll is the longest delay between the retries of a call that waits
// on the cluster (Config.Waiting), before jitter: a claim bound while the
// pod waits is seen within about WaitPoll, at one API read per claim each
// time (upstream's populator polls every 100 ms).
const WaitPoll = 2 * time.Second

// shortBackoff is the delay before retrying a call after n earlier
// transient failures in a row: ShortBackoff doubled n times, never more
// than long (the worker's BackoffPeriod). It is pure.
func shortBackoff(n int, long time.Duration) time.Duration {
	d := ShortBackoff
	for range n {
		if d >= long {
			break
		}
		d *= 2
	}
	return min(d, long)
}

// retryQueue holds when each worker is due for a resync or a retry. A UID
// has at most one due time; the latest decision replaces the previous one.
// It has its own lock, always taken after Workers.mu and never holding it.
type retryQueue struct {
	mu  sync.Mutex
	due map[types.UID]time.Time // guarded by mu
}

func (q *retryQueue) add(uid types.UID, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due[uid] = at
}

func (q *retryQueue) remove(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.due, uid)
}

// popDue removes and returns, sorted, the UIDs due at or before now.
func (q *retryQueue) popDue(now time.Time) []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []types.UID
	for uid, at := range q.due {
		if !at.After(now) {
			out = append(out, uid)
			delete(q.due, uid)
		}
	}
	slices.Sort(out)
	return out
}

// SyncDue wakes every worker whose resync or retry is due by the clock,
// replaying its last update as a sync (or a kill once terminating). The
// sync loop calls it every second; it never blocks on a Syncer call.
func (w *Workers) SyncDue(ctx context.Context) {
	due := w.retry.popDue(w.cfg.Clock.Now())
	if len(due) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, uid := range due {
		wk, ok := w.workers[uid]
		if !ok || wk.phase == Finished {
			continue
		}
		logger.V(5).Info("Pod worker requeue is due", "podUID", uid, "phase", wk.phase)
		wk.replay()
	}
}
