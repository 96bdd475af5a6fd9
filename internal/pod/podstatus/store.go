package podstatus

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Store holds the node's latest generated status of every pod, by UID.
//
// Concurrency: safe for use from any goroutine. Pod workers write (Set);
// the route by which per-pod state ends (internal/pod/podgone) forgets
// (Forget); the API server syncer, the kubelet API and the probers read.
// Statuses are deep-copied in and out, so callers own what they pass and
// what they get.
//
// Changed signals every Set or Forget that changed what is stored; the
// signal coalesces (capacity 1), so a reader that wakes on it reads every
// change since its last read: the whole store (Entries), or only the
// entries changed since a sequence number it kept (EntriesSince). Each
// entry carries the time of its last change, so a writer can tell how long
// a status waited (the status sync latency).
type Store struct {
	clock clock.PassiveClock
	// mu guards statuses and seq.
	mu       sync.Mutex
	statuses map[types.UID]Entry
	// seq counts the changes: the Seq of the latest changed entry.
	seq     uint64
	changed chan struct{}
}

// Entry is one pod's stored status and when it last changed.
type Entry struct {
	Status corev1.PodStatus
	// Changed is when a Set last changed the status.
	Changed time.Time
	// Seq is the store's change count at that change: an entry changed
	// after another has a greater Seq.
	Seq uint64
}

// NewStore returns an empty store that stamps changes with clk.
func NewStore(clk clock.PassiveClock) *Store {
	return &Store{clock: clk, statuses: make(map[types.UID]Entry), changed: make(chan struct{}, 1)}
}

// Changed returns a channel that receives a value after a Set or Forget
// changed the store. Several changes in a row may yield one value. There
// is one channel per store: give it one reader.
func (s *Store) Changed() <-chan struct{} { return s.changed }

func (s *Store) notify() {
	select {
	case s.changed <- struct{}{}:
	default: // a signal is already pending
	}
}

// Set records the pod's status. A pod never leaves a terminal phase: when
// the stored phase is Succeeded or Failed and the new one is not, the
// stored phase, reason and message are kept and the rest is updated. It
// returns the status as stored.
func (s *Store) Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus {
	st := *status.DeepCopy()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.statuses[uid]
	if ok && podutil.IsTerminal(prev.Status.Phase) && !podutil.IsTerminal(st.Phase) {
		st.Phase, st.Reason, st.Message = prev.Status.Phase, prev.Status.Reason, prev.Status.Message
	}
	changed, seq := prev.Changed, prev.Seq
	if !ok || !apiequality.Semantic.DeepEqual(prev.Status, st) {
		s.seq++
		changed, seq = s.clock.Now(), s.seq
		s.notify()
	}
	s.statuses[uid] = Entry{Status: st, Changed: changed, Seq: seq}
	return *st.DeepCopy()
}

// Get returns the pod's stored status.
func (s *Store) Get(uid types.UID) (corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.statuses[uid]
	if !ok {
		return corev1.PodStatus{}, false
	}
	return *e.Status.DeepCopy(), true
}

// Forget drops the pod's status: the pod is gone (podgone.Owner).
func (s *Store) Forget(_ context.Context, uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.statuses[uid]; ok {
		delete(s.statuses, uid)
		s.seq++
		s.notify()
	}
}

// HeldPods lists the pods with a stored status (podgone.Holder), so
// housekeeping finds a status no worker's end covered.
func (s *Store) HeldPods() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]types.UID, 0, len(s.statuses))
	for uid := range s.statuses {
		out = append(out, uid)
	}
	return out
}

// Snapshot returns a copy of every stored status.
func (s *Store) Snapshot() map[types.UID]corev1.PodStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]corev1.PodStatus, len(s.statuses))
	for uid, e := range s.statuses {
		out[uid] = *e.Status.DeepCopy()
	}
	return out
}

// Entries returns a copy of every stored status with its change time, and
// the store's change count (the since of a later EntriesSince).
func (s *Store) Entries() (map[types.UID]Entry, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]Entry, len(s.statuses))
	for uid, e := range s.statuses {
		out[uid] = copyEntry(e)
	}
	return out, s.seq
}

// EntriesSince returns a copy of the entries changed after change count
// since, and of the stored entries of also (whether changed or not), with
// the store's change count. It walks the store without copying the
// entries it leaves out, so a reader that keeps the count pays for what
// changed, not for every pod. A deleted entry is not reported.
func (s *Store) EntriesSince(since uint64, also map[types.UID]struct{}) (map[types.UID]Entry, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]Entry)
	for uid, e := range s.statuses {
		if _, ok := also[uid]; ok || e.Seq > since {
			out[uid] = copyEntry(e)
		}
	}
	return out, s.seq
}

func copyEntry(e Entry) Entry {
	return Entry{Status: *e.Status.DeepCopy(), Changed: e.Changed, Seq: e.Seq}
}
