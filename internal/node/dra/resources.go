package dra

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// CDIDevices are the CDI device IDs the container gets (upstream's
// GetResources): of each pod claim its resources.claims name, the devices
// of the requests it names (all of the claim's when it names none, and a
// device of no request goes to every container of the claim); of the
// pod's extended resource claim, the devices of the requests its
// RequestMappings map the container's DRA-backed extended resources to
// (extendedRequests). A claim
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
// ResourceClaim names) to the requests it names ("" for all), the
// extended resource claim's included.
func containerRequests(pod *corev1.Pod, c *corev1.Container) (map[string][]string, error) {
	byPodName := map[string][]string{}
	for _, rc := range c.Resources.Claims {
		byPodName[rc.Name] = append(byPodName[rc.Name], rc.Request)
	}
	out := map[string][]string{}
	if name, reqs := extendedRequests(pod, c); len(reqs) > 0 {
		out[name] = reqs
	}
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

// extendedRequests are the pod's extended resource claim and the requests
// of it that serve the container, upstream's: each RequestMapping of the
// container whose resource the container requests (a non-zero request of
// a DRA extended resource name), in the mappings' order; a container may
// have several per resource. No claim in the status: none.
func extendedRequests(pod *corev1.Pod, c *corev1.Container) (string, []string) {
	st := pod.Status.ExtendedResourceClaimStatus
	if st == nil {
		return "", nil
	}
	var reqs []string
	for _, rm := range st.RequestMappings {
		if rm.ContainerName != c.Name {
			continue
		}
		name := corev1.ResourceName(rm.ResourceName)
		if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() && podutil.IsDRAExtendedResourceName(name) {
			reqs = append(reqs, rm.RequestName)
		}
	}
	return st.ResourceClaimName, reqs
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
// device name, share ID and CDI IDs, as upstream's GetDynamicResources. A
// claim not in the cache is left out (the pod is not prepared yet or no
// more). Claims in the pod's spec order, then the pod's extended resource
// claim when a RequestMapping names the container (upstream's
// GetContainerClaimInfos: all its devices, not only the container's
// requests'); drivers in name order. The name is upstream's, which the pod
// resources server's DynamicResources role (internal/serve/podresources)
// declares.
func (m *Manager) GetDynamicResources(pod *corev1.Pod, c *corev1.Container) []*podresourcesapi.DynamicResource {
	uses := map[string]bool{}
	for _, rc := range c.Resources.Claims {
		uses[rc.Name] = true
	}
	pcs, err := claimsToPrepare(pod)
	if err != nil {
		return nil
	}
	uses[""] = podutil.MapsExtendedResources(pod, c.Name) // the extended resource claim's podName
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
				r := &podresourcesapi.ClaimResource{DriverName: driver, PoolName: d.PoolName, DeviceName: d.DeviceName,
					ShareId: (*string)(d.ShareID)}
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
