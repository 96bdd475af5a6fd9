package dra

import (
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// ClaimHealth is the health of the devices of each claim the container's
// resources.claims name, one ResourceStatus per entry there, for its
// allocatedResourcesStatus (upstream's UpdateAllocatedResourcesStatus of
// the DRA manager):
//   - the name is "claim:<pod claim name>", or
//     "claim:<pod claim name>/<request>" for an entry naming a request;
//   - one ResourceHealth per prepared device of the claim (of the named
//     request only, subrequests counted as their request; a device of no
//     request belongs to every request), drivers in name order: its ID
//     is the device's first CDI ID, else "<driver>/<pool>/<device>",
//     each ID once; its health the driver's last report while that holds
//     (Unknown when never reported or stale); the message with
//     HealthMessages, when there is one.
//
// A claim whose ResourceClaim is not known yet or not prepared (not in
// the cache) has no entry; a claim without a matching device has an entry
// with no resources, which the status generator drops (as upstream's
// rebuild does). Upstream gives this to regular containers only; so does
// the caller (podsync).
func (m *Manager) ClaimHealth(pod *corev1.Pod, c *corev1.Container) []corev1.ResourceStatus {
	if len(c.Resources.Claims) == 0 {
		return nil
	}
	now := m.cfg.Clock.Now()
	var out []corev1.ResourceStatus
	for _, rc := range c.Resources.Claims {
		name := actualClaimName(pod, rc.Name)
		if name == "" {
			continue
		}
		m.mu.Lock()
		e, ok := m.claims[claimKey(pod.Namespace, name)]
		var drivers map[string]DriverState
		if ok {
			drivers = e.DriverState
		}
		st := corev1.ResourceStatus{Name: claimResourceName(rc), Resources: []corev1.ResourceHealth{}}
		seen := map[corev1.ResourceID]bool{}
		for _, driver := range slices.Sorted(maps.Keys(drivers)) {
			for _, d := range drivers[driver].Devices {
				if rc.Request != "" && len(d.RequestNames) > 0 && !slices.Contains(d.RequestNames, resourceclaim.BaseRequestRef(rc.Request)) {
					continue
				}
				rh := m.resourceHealth(driver, d, now)
				if seen[rh.ResourceID] {
					continue
				}
				seen[rh.ResourceID] = true
				st.Resources = append(st.Resources, rh)
			}
		}
		m.mu.Unlock()
		if ok {
			out = append(out, st)
		}
	}
	return out
}

// claimResourceName is upstream's allocatedResourcesStatus name of a
// container's claim entry.
func claimResourceName(rc corev1.ResourceClaim) corev1.ResourceName {
	if rc.Request != "" {
		return corev1.ResourceName(fmt.Sprintf("claim:%s/%s", rc.Name, rc.Request))
	}
	return corev1.ResourceName("claim:" + rc.Name)
}

// actualClaimName is the ResourceClaim's name of the pod's claim: from
// status.resourceClaimStatuses, else resolved from the spec (upstream
// falls back so, since the statuses may not be there yet when a health
// update syncs the pod); "" when there is none.
func actualClaimName(pod *corev1.Pod, podClaim string) string {
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == podClaim && s.ResourceClaimName != nil && *s.ResourceClaimName != "" {
			return *s.ResourceClaimName
		}
	}
	for i := range pod.Spec.ResourceClaims {
		if pod.Spec.ResourceClaims[i].Name == podClaim {
			if n, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i]); err == nil && n != nil {
				return *n
			}
			return ""
		}
	}
	return ""
}

// resourceHealth is one device's entry (upstream's buildResourceHealth).
func (m *Manager) resourceHealth(driver string, d Device, now time.Time) corev1.ResourceHealth {
	h := m.health.get(driver, d.PoolName, d.DeviceName, now)
	rh := corev1.ResourceHealth{Health: apiHealth(h.Health)}
	if m.cfg.HealthMessages && h.Message != "" {
		msg := h.Message
		rh.Message = &msg
	}
	if len(d.CDIDeviceIDs) > 0 {
		rh.ResourceID = corev1.ResourceID(d.CDIDeviceIDs[0])
	} else {
		rh.ResourceID = corev1.ResourceID(driver + "/" + d.PoolName + "/" + d.DeviceName)
	}
	return rh
}

func apiHealth(h DeviceHealthStatus) corev1.ResourceHealthStatus {
	switch h {
	case DeviceHealthy:
		return corev1.ResourceHealthStatusHealthy
	case DeviceUnhealthy:
		return corev1.ResourceHealthStatusUnhealthy
	default:
		return corev1.ResourceHealthStatusUnknown
	}
}
