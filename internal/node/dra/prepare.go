package dra

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
)

// Prepare prepares the pod's ResourceClaims (upstream's PrepareResources),
// before its sandbox is created: those of spec.resourceClaims and the one
// the scheduler allocated for its DRA-backed extended resources
// (claimsToPrepare). Each claim is read from the API and must
// be allocated and reserved for the pod (a generated one owned by it);
// the pod is recorded as a user of each (checkpointed before any driver
// is called, so a restart unprepares what may have been prepared); the
// claims not prepared yet in this run go to their drivers, one
// NodePrepareResources per driver; the devices each returns are recorded
// with their CDI IDs, and the claims marked prepared. A claim already
// prepared for another pod is not prepared again. After a restart the
// restored claims are prepared again when a pod's sandbox is next
// created, as upstream (drivers are idempotent; the devices are replaced,
// not added to).
func (m *Manager) Prepare(ctx context.Context, pod *corev1.Pod) error {
	if err := m.prepare(ctx, pod); err != nil {
		return fmt.Errorf("prepare dynamic resources: %w", err)
	}
	return nil
}

func (m *Manager) prepare(ctx context.Context, pod *corev1.Pod) error {
	pcs, err := claimsToPrepare(pod)
	if err != nil || len(pcs) == 0 {
		return err
	}
	fresh, err := m.readClaims(ctx, pod, pcs)
	if err != nil {
		return err
	}
	batches, err := m.reference(pod.UID, fresh)
	if err != nil {
		return err
	}
	for driver, claims := range batches {
		if err := m.prepareWith(ctx, driver, claims); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, claims := range batches {
		for _, c := range claims {
			if e, ok := m.claims[claimKey(c.Namespace, c.Name)]; ok {
				e.prepared = true
			}
		}
	}
	return m.storeLocked()
}

// readClaims reads the pod's claims and checks that the pod may use
// them and that their drivers are registered.
func (m *Manager) readClaims(ctx context.Context, pod *corev1.Pod, pcs []podClaim) ([]ClaimState, error) {
	if m.cfg.Client == nil {
		return nil, errors.New("no API server to read ResourceClaims from (standalone mode)")
	}
	out := make([]ClaimState, 0, len(pcs))
	for _, pc := range pcs {
		claim, err := m.cfg.Client.ResourceV1().ResourceClaims(pod.Namespace).Get(ctx, pc.name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("fetch ResourceClaim %s: %w", pc.name, err)
		}
		if err := checkClaimForPod(pod, pc, claim); err != nil {
			return nil, err
		}
		st, err := claimStateOf(claim)
		if err != nil {
			return nil, fmt.Errorf("ResourceClaim %s: %w", claim.Name, err)
		}
		for driver := range st.DriverState {
			if _, err := m.drivers.plugin(driver); err != nil {
				return nil, err
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// reference records the pod as a user of its claims (new ones enter the
// cache), checkpoints that, and returns the claims to prepare per
// driver: those not prepared in this run.
func (m *Manager) reference(pod types.UID, claims []ClaimState) (map[string][]*drapb.Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	batches := map[string][]*drapb.Claim{}
	for _, st := range claims {
		key := claimKey(st.Namespace, st.ClaimName)
		e, ok := m.claims[key]
		switch {
		case !ok:
			e = &claimEntry{ClaimState: st}
			m.claims[key] = e
		case e.ClaimUID != st.ClaimUID:
			return nil, fmt.Errorf("old ResourceClaim with same name %s and different UID %s still exists (previous pod force-deleted?!)", st.ClaimName, e.ClaimUID)
		case e.unpreparing:
			return nil, fmt.Errorf("ResourceClaim %s is being unprepared", st.ClaimName)
		}
		e.PodUIDs[string(pod)] = struct{}{}
		if err := m.storeLocked(); err != nil {
			return nil, err
		}
		if e.prepared {
			continue
		}
		c := &drapb.Claim{Namespace: e.Namespace, Uid: string(e.ClaimUID), Name: e.ClaimName}
		for driver := range e.DriverState {
			batches[driver] = append(batches[driver], c)
		}
	}
	return batches, nil
}

// prepareWith has the driver prepare the claims and records the devices
// it returns for each.
func (m *Manager) prepareWith(ctx context.Context, driver string, claims []*drapb.Claim) error {
	p, err := m.drivers.plugin(driver)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(4).Info("Calling NodePrepareResources", "driver", driver, "endpoint", p.endpoint, "claims", len(claims))
	resp, err := p.prepare(ctx, claims)
	if err != nil {
		return fmt.Errorf("NodePrepareResources: %w", err)
	}
	for uid, result := range resp.GetClaims() {
		req := lookupClaim(claims, uid)
		if req == nil {
			return fmt.Errorf("NodePrepareResources returned result for unknown claim UID %s", uid)
		}
		if result.GetError() != "" {
			return fmt.Errorf("NodePrepareResources failed for ResourceClaim %s: %s", req.Name, result.GetError())
		}
		if err := m.setDevices(req, driver, result.GetDevices()); err != nil {
			return err
		}
	}
	if unfinished := len(claims) - len(resp.GetClaims()); unfinished != 0 {
		return fmt.Errorf("NodePrepareResources skipped %d ResourceClaims", unfinished)
	}
	return nil
}

// setDevices replaces the driver's devices of the claim.
func (m *Manager) setDevices(c *drapb.Claim, driver string, devices []*drapb.Device) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.claims[claimKey(c.Namespace, c.Name)]
	if !ok {
		return fmt.Errorf("internal error: unable to get claim info for ResourceClaim %s in namespace %s", c.Name, c.Namespace)
	}
	ds := e.DriverState[driver]
	ds.Devices = nil
	for _, d := range devices {
		ds.Devices = append(ds.Devices, Device{PoolName: d.GetPoolName(), DeviceName: d.GetDeviceName(),
			ShareID: (*types.UID)(d.ShareId), RequestNames: d.GetRequestNames(), CDIDeviceIDs: d.GetCdiDeviceIds()})
	}
	e.DriverState[driver] = ds
	return nil
}

// lookupClaim finds the claim of a response's UID among the request's.
func lookupClaim(claims []*drapb.Claim, uid string) *drapb.Claim {
	for _, c := range claims {
		if c.Uid == uid {
			return c
		}
	}
	return nil
}
