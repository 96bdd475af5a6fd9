package cpumanager

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/topology"
)

// The CPU manager is the topology manager's hint provider, as upstream's.
var _ topology.HintProvider = (*Manager)(nil)

// RemoveStale releases the CPUs of the containers no active pod (nor pod,
// the one being admitted) has, as upstream's GetTopologyHints and Allocate
// call removeStaleState first. The topology manager's caller calls it
// before admitting.
func (m *Manager) RemoveStale(ctx context.Context, pod *corev1.Pod, snap Snapshot) {
	if m.static == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	snap.Active = append(slices.Clip(snap.Active), pod)
	if m.removeStaleLocked(ctx, snap) {
		m.persistLogged(ctx)
	}
}

// TopologyHints are the container's CPU hints (Static.TopologyHints); the
// none policy has no preference.
func (m *Manager) TopologyHints(_ context.Context, pod *corev1.Pod, c *corev1.Container) topology.ProviderHints {
	if m.static == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.static.TopologyHints(m.state, pod, c)
}

// PodTopologyHints are the pod's CPU hints (Static.PodTopologyHints).
func (m *Manager) PodTopologyHints(_ context.Context, pod *corev1.Pod) topology.ProviderHints {
	if m.static == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.static.PodTopologyHints(m.state, pod)
}

// Allocate gives the container its exclusive CPUs with the topology
// manager's merged affinity and persists the state. Its error is one
// AdmitReason classifies.
func (m *Manager) Allocate(ctx context.Context, pod *corev1.Pod, c *corev1.Container, affinity topology.Hint) error {
	if m.static == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.static.AllocateContainer(m.state, pod, c, affinity.Affinity)
	if err != nil {
		return err
	}
	m.state = s
	m.persistLogged(ctx)
	return nil
}

// AdmitError is the reason and message of an Allocate error (AdmitReason).
func (m *Manager) AdmitError(err error) (reason, message string) { return AdmitReason(err) }

func (m *Manager) persistLogged(ctx context.Context) {
	if err := m.persist(); err != nil {
		klog.FromContext(ctx).Error(err, "Store state to checkpoint error")
	}
}
