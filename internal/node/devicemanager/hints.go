package devicemanager

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/topology"
)

// The device manager is the topology manager's first hint provider, as
// upstream's.
var _ topology.HintProvider = (*Manager)(nil)

// TopologyHints are the NUMA affinities the container's devices could
// have, by resource (upstream's GetTopologyHints): nil (no preference)
// for a resource whose devices have no topology; from the devices it
// holds when it holds as many as it asks (none when the count differs);
// else from the free devices and those its pod's init containers leave,
// none when they are too few.
func (m *Manager) TopologyHints(ctx context.Context, pod *corev1.Pod, c *corev1.Container) topology.ProviderHints {
	requests := map[string]int{}
	for name, q := range c.Resources.Limits {
		if m.isPluginResource(string(name)) {
			requests[string(name)] = int(q.Value())
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var reuse map[string]sets.Set[string]
	if m.reuseFor == string(pod.UID) {
		reuse = m.reuse
	}
	return m.hintsLocked(ctx, requests, func(resource string) sets.Set[string] {
		return m.pods.containerDevices(string(pod.UID), c.Name, resource)
	}, reuse)
}

// PodTopologyHints are the whole pod's device hints (upstream's
// GetPodTopologyHints), from its limits.
func (m *Manager) PodTopologyHints(ctx context.Context, pod *corev1.Pod) topology.ProviderHints {
	requests := map[string]int{}
	for name, q := range resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{ExcludeOverhead: true}) {
		if m.isPluginResource(string(name)) {
			requests[string(name)] = int(q.Value())
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hintsLocked(ctx, requests, func(resource string) sets.Set[string] {
		held := sets.New[string]()
		for container := range m.pods[string(pod.UID)] {
			held = held.Union(m.pods.containerDevices(string(pod.UID), container, resource))
		}
		return held
	}, nil)
}

// hintsLocked computes the hints of requests; the caller holds mu.
func (m *Manager) hintsLocked(ctx context.Context, requests map[string]int, held func(string) sets.Set[string], reuse map[string]sets.Set[string]) topology.ProviderHints {
	logger := klog.FromContext(ctx)
	hints := topology.ProviderHints{}
	for _, resource := range slices.Sorted(maps.Keys(requests)) {
		requested := requests[resource]
		if !m.hasTopology(resource) {
			hints[resource] = nil
			continue
		}
		if allocated := held(resource); allocated.Len() > 0 {
			if allocated.Len() != requested {
				logger.Info("Resource already allocated to pod with different number than request", "resourceName", resource, "request", requested, "allocated", allocated.Len())
				hints[resource] = []topology.Hint{}
				continue
			}
			hints[resource] = m.deviceHints(resource, allocated, sets.New[string](), requested)
			continue
		}
		available := m.healthy[resource].Difference(m.allocated[resource])
		reusable := reuse[resource]
		if available.Union(reusable).Len() < requested {
			logger.Info("Unable to generate topology hints: requested number of devices unavailable", "resourceName", resource, "request", requested, "available", available.Union(reusable).Len())
			hints[resource] = []topology.Hint{}
			continue
		}
		hints[resource] = m.deviceHints(resource, available, reusable, requested)
	}
	return hints
}

// deviceHints are upstream's generateDeviceTopologyHints: every mask of
// the NUMA nodes with devices (the host's when none) under which enough
// of available, and all of reusable, sit; the narrowest that could hold
// the request are preferred.
func (m *Manager) deviceHints(resource string, available, reusable sets.Set[string], request int) []topology.Hint {
	nodes := m.deviceNUMANodes(resource)
	if len(nodes) == 0 {
		nodes = m.cfg.NUMANodes
	}
	minSize := len(nodes)
	hints := []topology.Hint{}
	on := func(mask topology.Mask, id string) bool {
		for _, n := range numaNodes(m.devices[resource][id]) {
			if mask.IsSet(int(n)) {
				return true
			}
		}
		return false
	}
	topology.IterateMasks(nodes, func(mask topology.Mask) {
		inMask := 0
		for id := range m.devices[resource] {
			if on(mask, id) {
				inMask++
			}
		}
		if inMask >= request && mask.Count() < minSize {
			minSize = mask.Count()
		}
		matching := 0
		for id := range reusable {
			if m.devices[resource][id].GetTopology() == nil {
				continue
			}
			if !on(mask, id) {
				return
			}
			matching++
		}
		for id := range available {
			if on(mask, id) {
				matching++
			}
		}
		if matching >= request {
			hints = append(hints, topology.Hint{Affinity: mask})
		}
	})
	for i := range hints {
		hints[i].Preferred = hints[i].Affinity.Count() == minSize
	}
	return hints
}

// deviceNUMANodes are the host's NUMA nodes the resource's devices sit on;
// nodes the host does not have are ignored, as upstream.
func (m *Manager) deviceNUMANodes(resource string) []int {
	known := sets.New(m.cfg.NUMANodes...)
	with := sets.New[int]()
	for _, d := range m.devices[resource] {
		for _, n := range numaNodes(d) {
			if known.Has(int(n)) {
				with.Insert(int(n))
			}
		}
	}
	return sets.List(with)
}
