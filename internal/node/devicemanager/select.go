package devicemanager

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/topology"
)

// devicesToAllocate picks the devices container still needs of resource
// (upstream's devicesToAllocate): none when it has them already (a
// container restart) or when, before every source is seen, it was found
// running at start (berth restarted under it); else from reuse first,
// then from the free healthy devices, aligned to affinity where it can,
// letting the plugin choose among them when it offers a preferred
// allocation. The picked devices are marked allocated. Errors carry
// upstream's texts.
func (m *Manager) devicesToAllocate(ctx context.Context, pod *corev1.Pod, container, resource string, required int, reuse sets.Set[string], affinity topology.Hint) (sets.Set[string], error) {
	logger := klog.FromContext(ctx).WithValues("resourceName", resource, "containerName", container, "podUID", pod.UID)
	uid := string(pod.UID)
	m.mu.Lock()
	defer m.mu.Unlock()
	needed := required
	held := m.pods.containerDevices(uid, container, resource)
	if held != nil {
		needed -= held.Len()
		if needed != 0 {
			return nil, fmt.Errorf(msgChangedRequest, uid, container, resource, held.Len(), required)
		}
	}
	// Upstream skips a container found running at start only before every
	// source is seen, which in berth is before the first admission (a
	// source is seen with its first snapshot): a running container that
	// holds its devices keeps them, registered plugin or not.
	if (!m.cfg.SourcesReady() || held != nil) && m.cfg.Running[uid].Has(container) {
		logger.V(3).Info("Container detected running, nothing to do", "deviceNumber", needed)
		return nil, nil
	}
	healthy, registered := m.healthy[resource]
	if !registered {
		return nil, fmt.Errorf(msgUnregistered, resource)
	}
	if healthy.Len() == 0 {
		return nil, fmt.Errorf(msgNoHealthy, resource)
	}
	if !healthy.IsSuperset(held) {
		return nil, fmt.Errorf(msgNoLongerHealthy, resource)
	}
	if needed == 0 {
		return nil, nil
	}
	p := picker{m: m, resource: resource, picked: sets.New[string](), needed: needed}
	if p.take(reuse) {
		return p.picked, nil
	}
	available := m.healthy[resource].Difference(m.allocated[resource])
	if available.Len() < p.needed {
		return nil, fmt.Errorf(msgUnavailable, resource, p.needed, available.Len())
	}
	aligned, unaligned, noAffinity := m.filterByAffinity(resource, available, affinity)
	preferred := func(from sets.Set[string]) (sets.Set[string], error) {
		return m.preferredLocked(ctx, resource, from.Union(p.picked), p.picked, required)
	}
	if p.needed < aligned.Len() {
		pref, err := preferred(aligned)
		if err != nil {
			return nil, err
		}
		if p.take(pref.Intersection(aligned)) || p.take(aligned) {
			return p.picked, nil
		}
		return nil, fmt.Errorf(msgLessThanRequired, required, required-p.needed)
	}
	if p.take(aligned) {
		return p.picked, nil
	}
	pref, err := preferred(available)
	if err != nil {
		return nil, err
	}
	if p.take(pref.Intersection(available)) || p.take(unaligned) || p.take(noAffinity) {
		return p.picked, nil
	}
	return nil, fmt.Errorf(msgLessThanRequired, required, required-p.needed)
}

// picker takes devices for one container's resource; the caller holds mu.
type picker struct {
	m        *Manager
	resource string
	picked   sets.Set[string]
	needed   int
}

// take takes devices of from not yet picked, in ID order, marking them
// allocated; it reports whether none are needed any more.
func (p *picker) take(from sets.Set[string]) bool {
	if p.m.allocated[p.resource] == nil {
		p.m.allocated[p.resource] = sets.New[string]()
	}
	for _, id := range sets.List(from.Difference(p.picked)) {
		p.m.allocated[p.resource].Insert(id)
		p.picked.Insert(id)
		p.needed--
		if p.needed == 0 {
			return true
		}
	}
	return false
}

// preferredLocked asks the plugin for its preferred devices when it offers
// them (upstream's callGetPreferredAllocationIfAvailable); nil when it
// does not. The caller holds mu, which the call releases meanwhile.
func (m *Manager) preferredLocked(ctx context.Context, resource string, available, mustInclude sets.Set[string], size int) (sets.Set[string], error) {
	e, ok := m.endpoints[resource]
	if !ok {
		return nil, fmt.Errorf(msgNoEndpoint, resource)
	}
	if e.opts == nil || !e.opts.GetGetPreferredAllocationAvailable() {
		return nil, nil
	}
	if !e.stopped.IsZero() {
		return nil, fmt.Errorf(msgPreferredFailed, e.errStopped())
	}
	m.mu.Unlock()
	got, err := e.preferredAllocation(ctx, sets.List(available), sets.List(mustInclude), size)
	m.mu.Lock()
	if err != nil {
		return nil, fmt.Errorf(msgPreferredFailed, err)
	}
	return got, nil
}

// filterByAffinity splits available into the devices on affinity's NUMA
// nodes, those on others, and those with no topology (upstream's
// filterByAffinity); with no affinity, or devices without topology, all
// are in the last.
func (m *Manager) filterByAffinity(resource string, available sets.Set[string], affinity topology.Hint) (aligned, unaligned, noAffinity sets.Set[string]) {
	if affinity.Affinity == 0 || !m.hasTopology(resource) {
		return sets.New[string](), sets.New[string](), available
	}
	perNode := map[int64]sets.Set[string]{}
	for id := range available {
		nodes := numaNodes(m.devices[resource][id])
		if len(nodes) == 0 {
			nodes = []int64{nodeWithoutTopology}
		}
		for _, n := range nodes {
			if perNode[n] == nil {
				perNode[n] = sets.New[string]()
			}
			perNode[n].Insert(id)
		}
	}
	in := func(n int64) bool { return n != nodeWithoutTopology && affinity.Affinity.IsSet(int(n)) }
	nodes := make([]int64, 0, len(perNode))
	for n := range perNode {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		switch {
		case in(a) && in(b):
			return perNode[a].Len() < perNode[b].Len()
		case in(a):
			return true
		case in(b):
			return false
		case a == nodeWithoutTopology:
			return false
		case b == nodeWithoutTopology:
			return true
		}
		return perNode[a].Len() < perNode[b].Len()
	})
	aligned, unaligned, noAffinity = sets.New[string](), sets.New[string](), sets.New[string]()
	for id := range available {
		for _, n := range nodes {
			if !perNode[n].Has(id) {
				continue
			}
			switch {
			case n == nodeWithoutTopology:
				noAffinity.Insert(id)
			case in(n):
				aligned.Insert(id)
			default:
				unaligned.Insert(id)
			}
			break
		}
	}
	return aligned, unaligned, noAffinity
}

// hasTopology reports whether some device of resource has NUMA nodes
// (upstream's deviceHasTopologyAlignment); the caller holds mu.
func (m *Manager) hasTopology(resource string) bool {
	for _, d := range m.devices[resource] {
		if len(numaNodes(d)) > 0 {
			return true
		}
	}
	return false
}
