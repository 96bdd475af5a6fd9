package cpumanager

import (
	"context"

	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"
)

// update is one container whose cpuset must change.
type update struct {
	id   string
	cpus cpuset.CPUSet
}

// planUpdates is upstream's reconcileState decision: every running
// container of an active pod whose cpuset (its exclusive CPUs or the
// shared pool) is not the one it was last given. Pure.
func planUpdates(s State, sent map[string]cpuset.CPUSet, snap Snapshot) []update {
	var out []update
	for _, p := range snap.Active {
		uid := string(p.UID)
		for name, id := range snap.Running[uid] {
			cpus := s.CPUsOf(uid, name)
			if cpus.IsEmpty() {
				continue
			}
			if last, ok := sent[id]; ok && last.Equals(cpus) {
				continue
			}
			out = append(out, update{id: id, cpus: cpus})
		}
	}
	return out
}

// Run reconciles every ReconcilePeriod until ctx ends (nothing with the
// none policy, as upstream).
func (m *Manager) Run(ctx context.Context) error {
	if m.static == nil {
		<-ctx.Done()
		return nil
	}
	t := m.cfg.Clock.NewTicker(m.cfg.ReconcilePeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			m.Reconcile(ctx)
		}
	}
}

// Reconcile removes stale state, then gives running containers the
// cpusets they should have through the CRI. A failed update is retried at
// the next round.
func (m *Manager) Reconcile(ctx context.Context) {
	snap := m.cfg.Snapshot()
	m.mu.Lock()
	if m.removeStaleLocked(ctx, snap) {
		if err := m.persist(); err != nil {
			klog.FromContext(ctx).Error(err, "Store state to checkpoint error")
		}
	}
	ups := planUpdates(m.state, m.sent, snap)
	live := map[string]bool{}
	for _, cs := range snap.Running {
		for _, id := range cs {
			live[id] = true
		}
	}
	for id := range m.sent {
		if !live[id] {
			delete(m.sent, id)
		}
	}
	m.mu.Unlock()
	for _, u := range ups {
		if err := m.cfg.Update(ctx, u.id, u.cpus); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to update container", "containerID", u.id, "cpuSet", u.cpus.String())
			continue
		}
		m.mu.Lock()
		m.sent[u.id] = u.cpus
		m.mu.Unlock()
	}
}
