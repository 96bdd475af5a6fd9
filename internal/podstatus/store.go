package podstatus

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Store holds the node's latest generated status of every pod, by UID.
//
// Concurrency: safe for use from any goroutine. Pod workers write (Set,
// Delete); the API server syncer, the kubelet API and the probers read.
// Statuses are deep-copied in and out, so callers own what they pass and
// what they get.
type Store struct {
	// mu guards statuses.
	mu       sync.Mutex
	statuses map[types.UID]corev1.PodStatus
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{statuses: make(map[types.UID]corev1.PodStatus)}
}

// Set records the pod's status. A pod never leaves a terminal phase: when
// the stored phase is Succeeded or Failed and the new one is not, the
// stored phase, reason and message are kept and the rest is updated. It
// returns the status as stored.
func (s *Store) Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus {
	st := *status.DeepCopy()
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.statuses[uid]; ok && isTerminal(prev.Phase) && !isTerminal(st.Phase) {
		st.Phase, st.Reason, st.Message = prev.Phase, prev.Reason, prev.Message
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
	delete(s.statuses, uid)
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
