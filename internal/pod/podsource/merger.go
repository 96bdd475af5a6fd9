package podsource

import (
	"context"
	"errors"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Snapshot is the full set of pods one source has now. A source sends one
// whenever its set changes, and once at start even if empty, so the merger
// counts it as seen. The merger deep-copies the pods on receipt.
type Snapshot struct {
	Source string
	Pods   []*corev1.Pod
}

// updateBuffer is how many Updates may wait for the consumer, as upstream.
const updateBuffer = 50

// MergerConfig configures a Merger.
type MergerConfig struct {
	// Sources are the source names that must each send a snapshot before
	// SourcesReady is true.
	Sources []string
	// Clock stamps config.seen on pods that arrive without it.
	Clock clock.PassiveClock
}

// Merger merges the pods of all sources into one stream of incremental
// Updates. Its state (per source, the pods it last gave, by UID) is owned
// by the Run goroutine alone. Sources write to Snapshots() (full sets) or
// Changes() (incremental Updates, after one initial Snapshot); the consumer
// reads Updates(). SourcesReady is safe for concurrent use.
type Merger struct {
	sources   []string
	clock     clock.PassiveClock
	snapshots chan Snapshot
	changes   chan Update
	out       chan Update
	// ready is published by Run once every configured source was seen.
	ready atomic.Bool
}

// NewMerger validates cfg and returns a Merger; it starts nothing.
func NewMerger(cfg MergerConfig) (*Merger, error) {
	if cfg.Clock == nil {
		return nil, errors.New("new merger: a clock is required")
	}
	return &Merger{
		sources:   append([]string(nil), cfg.Sources...),
		clock:     cfg.Clock,
		snapshots: make(chan Snapshot),
		changes:   make(chan Update),
		out:       make(chan Update, updateBuffer),
	}, nil
}

// Snapshots is where sources send their full pod sets.
func (m *Merger) Snapshots() chan<- Snapshot { return m.snapshots }

// Changes is where an incremental source sends Updates (Op and Pods as
// they happened in the source). It must send one Snapshot first: only a
// Snapshot marks a source as seen.
func (m *Merger) Changes() chan<- Update { return m.changes }

// Updates is the merged stream. The pods are the receiver's own copies.
func (m *Merger) Updates() <-chan Update { return m.out }

// SourcesReady reports whether every configured source has sent at least
// one snapshot.
func (m *Merger) SourcesReady() bool { return m.ready.Load() }

// Run merges until ctx ends, then returns nil.
func (m *Merger) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("podsource-merger")
	state := map[string]podSet{}
	seen := map[string]bool{}
	m.publishReady(seen)
	for {
		var source string
		var pods []*corev1.Pod
		first := false
		select {
		case <-ctx.Done():
			return nil
		case s := <-m.snapshots:
			source, pods = s.Source, deepCopyPods(s.Pods)
			first = !seen[source]
			seen[source] = true
		case u := <-m.changes:
			source, pods = u.Source, applyUpdate(state[u.Source], u)
		}
		r := diffPods(source, state[source], pods, m.clock.Now())
		state[source] = r.next
		for _, bad := range r.refused {
			logger.Error(bad.err, "Refusing pod with an invalid UID", "pod", klog.KObj(bad.pod), "source", source)
		}
		for _, dup := range r.duplicates {
			logger.Error(nil, "Pod has the same full name or UID as another pod of its source, ignoring it",
				"pod", klog.KObj(dup), "podUID", dup.UID, "source", source)
		}
		updates := r.toUpdates(source, first)
		if first {
			m.publishReady(seen)
			logger.V(2).Info("Source seen", "source", source, "pods", len(r.next))
		}
		for _, u := range updates {
			logger.V(4).Info("Sending pod update", "op", u.Op, "source", source, "pods", klog.KObjSlice(u.Pods))
			select {
			case m.out <- u:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

func (m *Merger) publishReady(seen map[string]bool) {
	for _, s := range m.sources {
		if !seen[s] {
			m.ready.Store(false)
			return
		}
	}
	m.ready.Store(true)
}
