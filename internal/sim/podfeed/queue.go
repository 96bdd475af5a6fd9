package podfeed

import (
	"context"
	"sync"

	"github.com/berthk8s/berth/internal/pod/podsource"
)

// queue is one subscription's events, unbounded: the watch goroutine
// pushes without ever waiting for the node, the node's source pops.
type queue struct {
	mu     sync.Mutex
	events []podsource.FeedEvent
	closed bool
	// wake has a token when events or closed changed since the last pop.
	wake chan struct{}
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

// push appends ev; it does nothing once the queue is closed.
func (q *queue) push(ev podsource.FeedEvent) {
	q.mu.Lock()
	if !q.closed {
		q.events = append(q.events, ev)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.events = nil
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop waits for the oldest event; false once ctx ends or the queue is
// closed.
func (q *queue) pop(ctx context.Context) (podsource.FeedEvent, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return podsource.FeedEvent{}, false
		}
		if len(q.events) > 0 {
			ev := q.events[0]
			q.events[0] = podsource.FeedEvent{}
			q.events = q.events[1:]
			if len(q.events) == 0 {
				q.events = nil // let the backing array go
			}
			q.mu.Unlock()
			return ev, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return podsource.FeedEvent{}, false
		}
	}
}
