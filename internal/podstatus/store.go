package podstatus

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podutil"
)

// Store holds the node's latest generated status of every pod, by UID.
//
// Concurrency: safe for use from any goroutine. Pod workers write (Set,
// Delete); the API server syncer, the kubelet API and the probers read.
// Statuses are deep-copied in and out, so callers own what they pass and
// what they get.
//
// Changed signals every Set or Delete that changed what is stored; the
// signal coalesces (capacity 1), so a reader that wakes on it must read the
// whole store, not one entry.
type Store struct {
	// mu guards statuses.
	mu       sync.Mutex
	statuses map[types.UID]corev1.PodStatus
	changed  chan struct{}
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{statuses: make(map[types.UID]corev1.PodStatus), changed: make(chan struct{}, 1)}
}

// Changed returns a channel that receives a value after a Set or Delete
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
	if prev, ok := s.statuses[uid]; ok && podutil.IsTerminal(prev.Phase) && !podutil.IsTerminal(st.Phase) {
		st.Phase, st.Reason, st.Message = prev.Phase, prev.Reason, prev.Message
	}
	if prev, ok := s.statuses[uid]; !ok || !apiequality.Semantic.DeepEqual(prev, st) {
		s.notify()
	}
	s.statuses[uid] = st
	return *st.DeepCopy()
}

// Get returns the pod's stored status.
func (s *Store) Get(uid types.UID) (corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.statuses[uid]
	if !ok {
		return corev1.PodStatus{}, false
	}
	return *st.DeepCopy(), true
}

// Delete forgets the pod.
func (s *Store) Delete(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.statuses[uid]; ok {
		delete(s.statuses, uid)
		s.notify()
	}
}

// Snapshot returns a copy of every stored status.
func (s *Store) Snapshot() map[types.UID]corev1.PodStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]corev1.PodStatus, len(s.statuses))
	for uid, st := range s.statuses {
		out[uid] = *st.DeepCopy()
	}
	return out
}
