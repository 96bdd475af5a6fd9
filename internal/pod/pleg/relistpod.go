package pleg

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// RelistPod relists one pod at once, as Relist does for every pod: it
// lists the pod's sandboxes and containers, diffs them against the pod's
// record, inspects the pod into the cache when something changed (or its
// last inspection failed) and publishes the events. The pod workers call
// it after a sync acted on the runtime, so that what the sync did (a
// sandbox or container started or killed) reaches the cache and the
// status without waiting for the next periodic relist, as upstream's
// PLEGOnDemandRelist. The periodic relist stays the safety net: when the
// listing fails, RelistPod does nothing and the next relist sees the
// change.
//
// The cache's "newer than" contract holds: an inspected status carries the
// time its read began, and a pod whose listing did not change is marked
// observed at the time the listing began (Cache.SetObserved); the global
// timestamp is not moved (only a full relist knows every pod).
//
// It is serialised with Relist and blocks while a relist runs.
func (p *PLEG) RelistPod(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	logger := klog.FromContext(ctx).WithValues("podUID", uid)
	start := p.clock.Now()
	cur, err := p.runtime.ListPod(ctx, uid)
	if err != nil {
		logger.V(4).Info("On-demand relist failed; the next relist retries", "err", err)
		return
	}
	events := diffPod(uid, p.records[uid], cur)
	if len(events) == 0 && !p.reinspect[uid] {
		p.commit(uid, cur)
		if cur != nil {
			p.cache.SetObserved(uid, start)
		}
		return
	}
	if err := p.updateCache(ctx, uid, cur); err != nil {
		logger.V(4).Info("Inspection failed; retrying at the next relist", "err", err)
		p.reinspect[uid] = true
		return
	}
	delete(p.reinspect, uid)
	p.commit(uid, cur)
	sent, dropped := p.publish(ctx, events)
	logger.V(4).Info("Relisted pod on demand", "events", sent, "dropped", dropped)
}

// Reinspect has the pod inspected at its next relist (on demand or
// periodic) even if its listing did not change, as upstream's
// RequestPodReinspect: an in-place resize changes a container's resources,
// which the listing does not show.
func (p *PLEG) Reinspect(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reinspect[uid] = true
}
