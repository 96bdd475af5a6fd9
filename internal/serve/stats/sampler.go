package stats

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultSamplePeriod is how often CPU usage is sampled, as upstream's
// stats cache refreshes.
const DefaultSamplePeriod = 10 * time.Second

// nodeKey is the sample key of the node's own CPU usage; containers are
// keyed by their ID.
const nodeKey = "/"

// sampler turns cumulative CPU time into usage rates (nano cores). Run is
// the owner goroutine: it alone reads the counters and keeps the previous
// sample; it publishes each new set of rates as an immutable map.
type sampler struct {
	clock  clock.WithTicker
	period time.Duration
	// read returns the cumulative CPU nanoseconds by key, now.
	read func(ctx context.Context) map[string]uint64

	// prev is the previous sample; owned by Run.
	prev map[string]point
	// rates is the latest published rates by key (never modified).
	rates atomic.Pointer[map[string]uint64]
}

type point struct {
	at time.Time
	ns uint64
}

// Run samples at once and then every period until ctx ends.
func (s *sampler) Run(ctx context.Context) error {
	t := s.clock.NewTicker(s.period)
	defer t.Stop()
	for {
		s.step(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// step takes one sample and publishes the rates since the previous one.
func (s *sampler) step(ctx context.Context) {
	now := s.clock.Now()
	cur := s.read(ctx)
	rates, next := nanoCores(s.prev, cur, now)
	s.prev = next
	s.rates.Store(&rates)
	klog.FromContext(ctx).V(6).Info("Sampled CPU usage", "series", len(cur))
}

// Rates returns the latest CPU rates in nano cores by key (nil before two
// samples). The map must not be modified.
func (s *sampler) Rates() map[string]uint64 {
	if r := s.rates.Load(); r != nil {
		return *r
	}
	return nil
}

// nanoCores computes the usage rate of every key sampled twice, and the
// sample to keep for next time. A counter that went backwards (a
// container restarted under the same key) has no rate this time. It is
// pure.
func nanoCores(prev map[string]point, cur map[string]uint64, now time.Time) (map[string]uint64, map[string]point) {
	rates := make(map[string]uint64, len(cur))
	next := make(map[string]point, len(cur))
	for key, ns := range cur {
		next[key] = point{at: now, ns: ns}
		p, ok := prev[key]
		if !ok || ns < p.ns || !now.After(p.at) {
			continue
		}
		elapsed := now.Sub(p.at)
		rates[key] = uint64(float64(ns-p.ns) / elapsed.Seconds())
	}
	return rates, next
}
