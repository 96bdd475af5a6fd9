package cpumanager

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// resourceCPU is the resource the CPU manager gives hints for.
const resourceCPU = string(corev1.ResourceCPU)

// TopologyHints are the NUMA affinities a container's exclusive CPUs could
// have, as upstream's static policy's GetTopologyHints: none (no
// preference) for a container on the shared pool; from the CPUs it holds
// when it holds as many as it asks; else from the free CPUs and the CPUs
// its pod's earlier init containers leave to reuse. Pure.
func (p *Static) TopologyHints(s State, pod *corev1.Pod, c *corev1.Container) topology.ProviderHints {
	n := GuaranteedCPUs(pod, c)
	if n == 0 || resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	if held, ok := s.Exclusive(string(pod.UID), c.Name); ok {
		if held.Size() != n {
			return topology.ProviderHints{resourceCPU: {}}
		}
		return topology.ProviderHints{resourceCPU: p.generateHints(held, cpuset.New(), n)}
	}
	return topology.ProviderHints{resourceCPU: p.generateHints(p.available(s), reusable(s, pod, c.Name), n)}
}

// PodTopologyHints are the hints of the whole pod's exclusive CPUs
// (topologyManagerScope pod), as upstream's GetPodTopologyHints.
func (p *Static) PodTopologyHints(s State, pod *corev1.Pod) topology.ProviderHints {
	n := podGuaranteedCPUs(pod)
	if n == 0 || resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	assigned := cpuset.New()
	for _, c := range allContainers(pod) {
		if held, ok := s.Exclusive(string(pod.UID), c.Name); ok {
			if held.Size() != GuaranteedCPUs(pod, &c) {
				return topology.ProviderHints{resourceCPU: {}}
			}
			assigned = assigned.Union(held)
		}
	}
	if assigned.Size() == n {
		return topology.ProviderHints{resourceCPU: p.generateHints(assigned, cpuset.New(), n)}
	}
	// Upstream's cpusToReuse of a pod not yet allocated is empty.
	return topology.ProviderHints{resourceCPU: p.generateHints(p.available(s), assigned, n)}
}

// available is upstream's GetAvailableCPUs: the shared pool less the
// reserved CPUs.
func (p *Static) available(s State) cpuset.CPUSet { return s.Default.Difference(p.reserved) }

// generateHints is upstream's generateCPUTopologyHints: every set of NUMA
// nodes that holds the reusable CPUs and enough free ones; preferred are
// those as narrow as the narrowest set that has request CPUs at all.
func (p *Static) generateHints(available, reuse cpuset.CPUSet, request int) []topology.Hint {
	details := p.topo.CPUDetails
	nodes := details.NUMANodes().List()
	minAffinity := len(nodes)
	hints := []topology.Hint{}
	topology.IterateMasks(nodes, func(m topology.Mask) {
		if details.CPUsInNUMANodes(m.Bits()...).Size() >= request && m.Count() < minAffinity {
			minAffinity = m.Count()
		}
		matching := 0
		for _, c := range reuse.List() {
			if !m.IsSet(details[c].NUMANodeID) {
				return
			}
			matching++
		}
		for _, c := range available.List() {
			if m.IsSet(details[c].NUMANodeID) {
				matching++
			}
		}
		if matching >= request {
			hints = append(hints, topology.Hint{Affinity: m})
		}
	})
	for i := range hints {
		hints[i].Preferred = hints[i].Affinity.Count() == minAffinity
	}
	return hints
}

// alignedFirst is upstream's allocateCPUs with a NUMA affinity: as many
// CPUs as it can from the affinity's NUMA nodes, the rest from anywhere.
func (p *Static) alignedFirst(allocatable cpuset.CPUSet, n int, affinity topology.Mask) (cpuset.CPUSet, error) {
	result := cpuset.New()
	if affinity != 0 {
		aligned := allocatable.Intersection(p.topo.CPUDetails.CPUsInNUMANodes(affinity.Bits()...))
		cs, err := takeByTopology(p.topo, aligned, min(n, aligned.Size()), p.opts.DistributeCPUsAcrossCores)
		if err != nil {
			return cpuset.New(), err
		}
		result = cs
	}
	rest, err := takeByTopology(p.topo, allocatable.Difference(result), n-result.Size(), p.opts.DistributeCPUsAcrossCores)
	if err != nil {
		return cpuset.New(), err
	}
	return result.Union(rest), nil
}

// reusable is the CPUs a pod's container may take from the containers
// before it, as AllocatePod walks them (upstream's cpusToReuse): a regular
// init container's, not a sidecar's, less what later ones took.
func reusable(s State, pod *corev1.Pod, name string) cpuset.CPUSet {
	reuse := cpuset.New()
	for _, c := range allContainers(pod) {
		if c.Name == name {
			break
		}
		held, _ := s.Exclusive(string(pod.UID), c.Name)
		if isInit(pod, c.Name) && !podutil.IsSidecar(&c) {
			reuse = reuse.Union(held)
		} else {
			reuse = reuse.Difference(held)
		}
	}
	return reuse
}

func isInit(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

func allContainers(pod *corev1.Pod) []corev1.Container {
	return append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
}

// podGuaranteedCPUs is upstream's podGuaranteedCPUs: the larger of the
// widest regular init container (with the sidecars started before it) and
// the app containers with every sidecar.
func podGuaranteedCPUs(pod *corev1.Pod) int {
	var initMax, sidecars, apps int
	for _, c := range pod.Spec.InitContainers {
		n := GuaranteedCPUs(pod, &c)
		if podutil.IsSidecar(&c) {
			sidecars += n
		} else if sidecars+n > initMax {
			initMax = sidecars + n
		}
	}
	for _, c := range pod.Spec.Containers {
		apps += GuaranteedCPUs(pod, &c)
	}
	return max(initMax, apps+sidecars)
}
