package pluginmanager

import (
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Upstream's exponential back-off of failed plugin operations
// (pkg/util/goroutinemap/exponentialbackoff, which the plugin manager's
// operation executor uses): 500 ms after the first failure, doubling, at
// most 2 min 2 s. upstream_test.go pins them.
const (
	initialRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 2*time.Minute + 2*time.Second
)

// queue is the retry policy of the plugin operations, per socket as
// upstream's goroutine map: at most one operation in flight for a socket,
// and after a failed one, none before its back-off has passed; a success
// resets the back-off. Owned by the manager's owner goroutine; not safe
// for concurrent use.
type queue struct {
	inFlight map[string]bool
	failed   map[string]*retry
}

// retry is a socket's back-off after a failure.
type retry struct {
	backoff   wait.Backoff
	notBefore time.Time
}

func newQueue() *queue {
	return &queue{inFlight: map[string]bool{}, failed: map[string]*retry{}}
}

// ready reports whether an operation on socket may start at now.
func (q *queue) ready(socket string, now time.Time) bool {
	if q.inFlight[socket] {
		return false
	}
	r, ok := q.failed[socket]
	return !ok || !now.Before(r.notBefore)
}

// start marks an operation on socket in flight.
func (q *queue) start(socket string) { q.inFlight[socket] = true }

// done ends socket's operation, which failed when failed is set, at now;
// it returns the back-off before the next (0 after a success).
func (q *queue) done(socket string, failed bool, now time.Time) time.Duration {
	delete(q.inFlight, socket)
	if !failed {
		delete(q.failed, socket)
		return 0
	}
	r, ok := q.failed[socket]
	if !ok {
		r = &retry{backoff: wait.Backoff{Duration: initialRetryDelay, Factor: 2, Cap: maxRetryDelay, Steps: math.MaxInt32}}
		q.failed[socket] = r
	}
	delay := r.backoff.Step()
	r.notBefore = now.Add(delay)
	return delay
}

// prune forgets the back-off of the sockets with nothing left to do (not
// in planned, none in flight): a socket removed after a failure starts
// afresh when it is created again.
func (q *queue) prune(planned map[string]bool) {
	for s := range q.failed {
		if !planned[s] && !q.inFlight[s] {
			delete(q.failed, s)
		}
	}
}

// nextRetry returns the earliest moment after now at which a socket
// backing off may retry, if any does.
func (q *queue) nextRetry(now time.Time) (time.Time, bool) {
	var next time.Time
	for s, r := range q.failed {
		if q.inFlight[s] || !r.notBefore.After(now) {
			continue
		}
		if next.IsZero() || r.notBefore.Before(next) {
			next = r.notBefore
		}
	}
	return next, !next.IsZero()
}
