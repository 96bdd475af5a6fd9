package pleg

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

var _ podworker.StatusCache = (*Cache)(nil)

// Cache is the pod status cache: the full runtime status of every pod the
// runtime holds, as last inspected by the PLEG. It represents all pods of
// the runtime: a pod it has no entry for reads as an empty Pod carrying
// only its UID ("nothing of it runs").
//
// Every entry is at least as fresh as the global timestamp (UpdateTime),
// which the PLEG bumps after each relist; single entries may be fresher.
//
// Concurrency: safe for use from any goroutine. The PLEG is the only
// writer (Set, Delete, UpdateTime); pod workers read. Returned pods are
// shared: callers must not modify them.
type Cache struct {
	// mu guards pods, timestamp and waiters.
	mu   sync.Mutex
	pods map[types.UID]cacheEntry
	// timestamp is the global freshness; zero until the first UpdateTime.
	timestamp time.Time
	// waiters are the blocked GetNewerThan calls, by pod UID.
	waiters map[types.UID][]*waiter
}

type cacheEntry struct {
	pod *runtimestate.Pod
	err error
	// modified is when the status was read (taken before the read).
	modified time.Time
}

// waiter is one blocked GetNewerThan call. ch has capacity 1 and receives
// exactly one entry, sent under mu, after which the waiter is dropped.
type waiter struct {
	minTime time.Time
	ch      chan cacheEntry
}

// NewCache returns an empty cache whose global timestamp is unset, so
// GetNewerThan blocks until the first relist completes.
func NewCache() *Cache {
	return &Cache{
		pods:    make(map[types.UID]cacheEntry),
		waiters: make(map[types.UID][]*waiter),
	}
}

// Get returns the cached status of the pod without blocking, and the error
// of the inspection that produced it. A pod without an entry yields an
// empty Pod with only its UID set.
func (c *Cache) Get(uid types.UID) (*runtimestate.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pods[uid]
	if !ok {
		return &runtimestate.Pod{UID: uid}, nil
	}
	return e.pod, e.err
}

// Set records the status of the pod read at timestamp (taken before the
// read), or the error that read returned, and wakes the waiters it
// satisfies. A nil pod is stored as an empty Pod with the UID.
func (c *Cache) Set(uid types.UID, pod *runtimestate.Pod, err error, timestamp time.Time) {
	if pod == nil {
		pod = &runtimestate.Pod{UID: uid}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pods[uid] = cacheEntry{pod: pod, err: err, modified: timestamp}
	c.notifyLocked(uid)
}

// SetObserved records that the pod's entry still held at timestamp (a
// listing begun then showed no change since the entry was read) and wakes
// the waiters it satisfies. The entry's time only moves forward; a pod
// without an entry is left alone (the next UpdateTime answers for it).
func (c *Cache) SetObserved(uid types.UID, timestamp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pods[uid]
	if !ok || !timestamp.After(e.modified) {
		return
	}
	e.modified = timestamp
	c.pods[uid] = e
	c.notifyLocked(uid)
}

// Delete drops the pod's entry: the runtime no longer holds anything of it.
// Waiters are not woken; the next UpdateTime answers them with an empty Pod.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
}

// UpdateTime moves the global timestamp forward to t (never backward) and
// wakes every waiter it satisfies. The PLEG calls it once per relist, after
// every changed pod has been Set or Deleted.
func (c *Cache) UpdateTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.timestamp) {
		c.timestamp = t
	}
	for uid := range c.waiters {
		c.notifyLocked(uid)
	}
}

// GetNewerThan blocks until the cache holds a status of the pod read after
// minTime, or the global timestamp is after minTime, and returns it (an
// empty Pod with the UID when the runtime has nothing of the pod). It
// returns an error wrapping the context's cause if ctx ends first, or the
// error of the inspection that produced the status.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*runtimestate.Pod, error) {
	c.mu.Lock()
	if e, ok := c.newerThanLocked(uid, minTime); ok {
		c.mu.Unlock()
		return e.pod, e.err
	}
	w := &waiter{minTime: minTime, ch: make(chan cacheEntry, 1)}
	c.waiters[uid] = append(c.waiters[uid], w)
	c.mu.Unlock()

	select {
	case e := <-w.ch:
		return e.pod, e.err
	case <-ctx.Done():
		c.mu.Lock()
		c.removeWaiterLocked(uid, w)
		c.mu.Unlock()
		return nil, fmt.Errorf("wait for status of pod %q: %w", uid, context.Cause(ctx))
	}
}

// NewerThan reports whether the cache holds a status of the pod read after
// t (or the global timestamp is after t): whether GetNewerThan(uid, t)
// would return at once.
func (c *Cache) NewerThan(uid types.UID, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.newerThanLocked(uid, t)
	return ok
}

// newerThanLocked returns the pod's entry if it satisfies minTime.
func (c *Cache) newerThanLocked(uid types.UID, minTime time.Time) (cacheEntry, bool) {
	e, ok := c.pods[uid]
	globalNewer := !c.timestamp.IsZero() && c.timestamp.After(minTime)
	switch {
	case ok && (e.modified.After(minTime) || globalNewer):
		return e, true
	case !ok && globalNewer:
		return cacheEntry{pod: &runtimestate.Pod{UID: uid}}, true
	}
	return cacheEntry{}, false
}

// notifyLocked answers and drops the pod's waiters that are now satisfied.
func (c *Cache) notifyLocked(uid types.UID) {
	ws := c.waiters[uid]
	if len(ws) == 0 {
		return
	}
	kept := ws[:0]
	for _, w := range ws {
		if e, ok := c.newerThanLocked(uid, w.minTime); ok {
			w.ch <- e // never blocks: capacity 1, sent once.
			continue
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		delete(c.waiters, uid)
		return
	}
	c.waiters[uid] = kept
}

func (c *Cache) removeWaiterLocked(uid types.UID, w *waiter) {
	ws := c.waiters[uid]
	for i := range ws {
		if ws[i] == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(c.waiters, uid)
		return
	}
	c.waiters[uid] = ws
}
