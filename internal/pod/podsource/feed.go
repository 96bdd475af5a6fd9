package podsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Feed gives many nodes' APIWatchers their pods from one list and watch
// (berth simulate's shared pod informer, internal/sim/podfeed), in place
// of a list and watch per node.
type Feed interface {
	// Subscribe waits for the feed's first complete list, then returns
	// a Subscription whose first event is nodeName's pods (FeedReplace)
	// and whose later ones are every change to them, in the watch's
	// order. One subscription a node at a time.
	Subscribe(ctx context.Context, nodeName string) (Subscription, error)
}

// Subscription is one node's share of a Feed.
type Subscription interface {
	// Next waits for the next event; false once ctx ends.
	Next(ctx context.Context) (FeedEvent, bool)
	// Close ends the subscription; the Feed forgets the node.
	Close()
}

// FeedOp is what a FeedEvent does to the node's pods, as the reflector
// store's methods: set one pod, delete one, or replace them all.
type FeedOp int

const (
	FeedUpsert FeedOp = iota
	FeedDelete
	FeedReplace
)

// FeedEvent is one change to a node's pods. Pods are the feed's: the
// receiver copies what it keeps (apiStore.send deep-copies).
type FeedEvent struct {
	Op   FeedOp
	Pods []*corev1.Pod
}

// runFeed is Run with a Feed: the node's apiStore gets the subscription's
// events as a reflector would hand them, so both paths share every rule
// after the watch.
func (s *APIWatcher) runFeed(ctx context.Context, store *apiStore) error {
	sub, err := s.cfg.Feed.Subscribe(ctx, s.cfg.NodeName)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer sub.Close()
	for {
		ev, ok := sub.Next(ctx)
		if !ok {
			return nil
		}
		if err := applyFeedEvent(store, ev); err != nil {
			store.logger.Error(err, "Dropped a pod event from the shared feed")
		}
	}
}

// applyFeedEvent hands ev to the store.
func applyFeedEvent(store cache.ReflectorStore, ev FeedEvent) error {
	switch ev.Op {
	case FeedReplace:
		list := make([]interface{}, len(ev.Pods))
		for i, p := range ev.Pods {
			list[i] = p
		}
		return store.Replace(list, "")
	case FeedDelete:
		for _, p := range ev.Pods {
			if err := store.Delete(p); err != nil {
				return err
			}
		}
	default:
		for _, p := range ev.Pods {
			if err := store.Update(p); err != nil {
				return err
			}
		}
	}
	return nil
}
