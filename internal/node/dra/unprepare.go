package dra

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
)

// Unprepare ends the pod's use of its claims (upstream's
// UnprepareResources), once none of its containers runs: a claim another
// pod still uses only loses the pod; the others are marked unpreparing
// (no pod may take them up meanwhile), unprepared with their drivers, one
// NodeUnprepareResources per driver, and leave the cache and the
// checkpoint. A pod that holds nothing returns at once. On failure the
// claims stay, still unpreparing, and the next call tries again.
func (m *Manager) Unprepare(ctx context.Context, pod types.UID) error {
	if err := m.unprepare(ctx, pod); err != nil {
		return fmt.Errorf("unprepare dynamic resources: %w", err)
	}
	return nil
}

func (m *Manager) unprepare(ctx context.Context, pod types.UID) error {
	batches, last, err := m.release(pod)
	if err != nil || (len(batches) == 0 && len(last) == 0) {
		return err
	}
	for _, driver := range slices.Sorted(maps.Keys(batches)) {
		if err := m.unprepareWith(ctx, driver, batches[driver]); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, key := range last {
		klog.FromContext(ctx).V(4).Info("Unprepared ResourceClaim", "claim", key, "podUID", pod)
		delete(m.claims, key)
	}
	return m.storeLocked()
}

// release drops the pod from the claims others still use (checkpointed)
// and returns, per driver, the claims the pod was the last user of, now
// unpreparing, with their keys.
func (m *Manager) release(pod types.UID) (map[string][]*drapb.Claim, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	batches := map[string][]*drapb.Claim{}
	var last []string
	changed := false
	for _, key := range slices.Sorted(maps.Keys(m.claims)) {
		e := m.claims[key]
		if _, ok := e.PodUIDs[string(pod)]; !ok {
			continue
		}
		if len(e.PodUIDs) > 1 {
			delete(e.PodUIDs, string(pod))
			changed = true
			continue
		}
		e.unpreparing = true
		last = append(last, key)
		c := &drapb.Claim{Namespace: e.Namespace, Uid: string(e.ClaimUID), Name: e.ClaimName}
		for driver := range e.DriverState {
			batches[driver] = append(batches[driver], c)
		}
	}
	if changed {
		if err := m.storeLocked(); err != nil {
			return nil, nil, err
		}
	}
	return batches, last, nil
}

// unprepareWith has the driver unprepare the claims.
func (m *Manager) unprepareWith(ctx context.Context, driver string, claims []*drapb.Claim) error {
	p, err := m.drivers.plugin(driver)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Calling NodeUnprepareResources", "driver", driver, "endpoint", p.endpoint, "claims", len(claims))
	resp, err := p.unprepare(ctx, claims)
	if err != nil {
		return fmt.Errorf("NodeUnprepareResources: %w", err)
	}
	for uid, result := range resp.GetClaims() {
		req := lookupClaim(claims, uid)
		if req == nil {
			return fmt.Errorf("NodeUnprepareResources returned result for unknown claim UID %s", uid)
		}
		if result.GetError() != "" {
			return fmt.Errorf("NodeUnprepareResources failed for ResourceClaim %s: %s", req.Name, result.GetError())
		}
	}
	if unfinished := len(claims) - len(resp.GetClaims()); unfinished != 0 {
		return fmt.Errorf("NodeUnprepareResources skipped %d ResourceClaims", unfinished)
	}
	return nil
}
