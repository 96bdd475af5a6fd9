package dra

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// CDIDevices are the CDI device IDs the container gets (upstream's
// GetResources): of each pod claim its resources.claims name, the devices
// of the requests it names (all of the claim's when it names none, and a
// device of no request goes to every container of the claim). A claim
// not in the cache (not prepared) is an error: the container cannot be
// configured.
func (m *Manager) CDIDevices(pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	requests, err := containerRequests(pod, c)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		e, ok := m.claims[claimKey(pod.Namespace, name)]
		if !ok {
			return nil, fmt.Errorf("internal error: unable to get claim info for ResourceClaim %s in namespace %s", name, pod.Namespace)
		}
		for _, req := range requests[name] {
			out = append(out, e.cdiIDs(req)...)
		}
	}
	return out, nil
}

// containerRequests maps the claims the container uses (their
// ResourceClaim names) to the requests it names ("" for all).
func containerRequests(pod *corev1.Pod, c *corev1.Container) (map[string][]string, error) {
	byPodName := map[string][]string{}
	for _, rc := range c.Resources.Claims {
		byPodName[rc.Name] = append(byPodName[rc.Name], rc.Request)
	}
	out := map[string][]string{}
	if len(byPodName) == 0 {
		return out, nil
	}
	pcs, err := podClaimNames(pod)
	if err != nil {
		return nil, err
	}
	for _, pc := range pcs {
		if reqs, ok := byPodName[pc.podName]; ok {
			out[pc.name] = append(out[pc.name], reqs...)
		}
	}
	return out, nil
}

// cdiIDs are the claim's CDI IDs for one request ("" all), drivers in
// name order.
func (e *claimEntry) cdiIDs(request string) []string {
	var out []string
	for _, driver := range slices.Sorted(maps.Keys(e.DriverState)) {
		for _, d := range e.DriverState[driver].Devices {
			if request == "" || len(d.RequestNames) == 0 || slices.Contains(d.RequestNames, request) {
				out = append(out, d.CDIDeviceIDs...)
			}
		}
	}
	return out
}

// GetDynamicResources lists, for the pod resources API (List and Get), the
// claims the container uses with each prepared device: its driver, pool,
// device name and CDI IDs, as upstream's GetDynamicResources. A claim
// not in the cache is left out (the pod is not prepared yet or no more).
// Claims in the pod's spec order, drivers in name order. The name is
// upstream's, which the pod resources server's DynamicResources role
// (internal/serve/podresources) declares.
func (m *Manager) GetDynamicResources(pod *corev1.Pod, c *corev1.Container) []*podresourcesapi.DynamicResource {
	uses := map[string]bool{}
	for _, rc := range c.Resources.Claims {
		uses[rc.Name] = true
	}
	pcs, err := podClaimNames(pod)
	if err != nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*podresourcesapi.DynamicResource
	for _, pc := range pcs {
		e, ok := m.claims[claimKey(pod.Namespace, pc.name)]
		if !uses[pc.podName] || !ok {
			continue
		}
		dr := &podresourcesapi.DynamicResource{ClaimName: e.ClaimName, ClaimNamespace: e.Namespace}
		for _, driver := range slices.Sorted(maps.Keys(e.DriverState)) {
			for _, d := range e.DriverState[driver].Devices {
				r := &podresourcesapi.ClaimResource{DriverName: driver, PoolName: d.PoolName, DeviceName: d.DeviceName}
				for _, id := range d.CDIDeviceIDs {
					r.CdiDevices = append(r.CdiDevices, &podresourcesapi.CDIDevice{Name: id})
				}
				dr.ClaimResources = append(dr.ClaimResources, r)
			}
		}
		out = append(out, dr)
	}
	return out
}
