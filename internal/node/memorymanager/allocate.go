package memorymanager

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Reasons of an admission failure, as upstream's cm/admission words them.
const ReasonUnexpected = "UnexpectedAdmissionError"

// AdmitReason returns the reason and message of a pod's rejection for an
// allocation error, as upstream's GetPodAdmitResult.
func AdmitReason(err error) (reason, message string) {
	return ReasonUnexpected, fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
}

// requested is upstream's getContainerRequestedResources: the
// container's memory and huge page requests, in bytes.
func requested(c *corev1.Container) (map[corev1.ResourceName]uint64, error) {
	out := map[corev1.ResourceName]uint64{}
	for name, q := range c.Resources.Requests {
		if !isMemoryType(name) {
			continue
		}
		v, ok := q.AsInt64()
		if !ok {
			return nil, fmt.Errorf("[memorymanager] failed to represent quantity as int64")
		}
		out[name] = uint64(v)
	}
	return out, nil
}

// AllocatePod gives each container of a Guaranteed pod, init containers
// first, its memory blocks, as upstream's static Allocate called for each
// container at admission (berth has no topology manager: each container
// takes the best of its own hints, which is what upstream does when the
// topology manager's policy is none). Memory that a regular init container
// held is reused by the containers after it on the same NUMA nodes. It
// returns the new state; st is not changed. Containers already in st keep
// their blocks. Other pods, and pods with pod-level resources (upstream's
// PodLevelResourceManagers is off), get nothing.
func (p *Static) AllocatePod(st state.Checkpoint, pod *corev1.Pod) (state.Checkpoint, error) {
	if podutil.QOSClass(pod) != corev1.PodQOSGuaranteed || resourcehelper.IsPodLevelResourcesSet(pod) {
		return st, nil
	}
	out := state.Checkpoint{PolicyName: st.PolicyName, MachineState: st.MachineState.Clone(), Entries: st.Entries.Clone()}
	if out.Entries == nil {
		out.Entries = state.ContainerMemoryAssignments{}
	}
	reuse := reusable{}
	uid := string(pod.UID)
	containers := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	for i := range containers {
		c := &containers[i]
		req, err := requested(c)
		if err != nil {
			return st, err
		}
		if len(req) == 0 {
			continue
		}
		if blocks, ok := out.Entries[uid][c.Name]; ok {
			reuse.update(pod, c, blocks)
			continue
		}
		blocks, err := p.allocate(out.MachineState, reuse, req)
		if err != nil {
			return st, err
		}
		reuse.update(pod, c, blocks)
		if out.Entries[uid] == nil {
			out.Entries[uid] = map[string][]state.Block{}
		}
		out.Entries[uid][c.Name] = blocks
		shrinkInitBlocks(out.Entries[uid], pod, c, blocks)
	}
	return out, nil
}

// allocate is one container's allocation: the best hint, then each memory
// type's blocks on it, the machine state updated (ms is changed).
func (p *Static) allocate(ms state.NUMANodeMap, reuse reusable, req map[corev1.ResourceName]uint64) ([]state.Block, error) {
	best, ok := bestHint(calculateHints(ms, reuse, req))
	if !ok {
		return nil, fmt.Errorf("[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
	}
	if violatesGroups(ms, best.NUMANodes) {
		return nil, fmt.Errorf("[memorymanager] preferred hint violates NUMA node allocation")
	}
	nodes := best.NUMANodes.bits()
	var blocks []state.Block
	for _, name := range slices.Sorted(maps.Keys(req)) {
		size := req[name]
		blocks = append(blocks, state.Block{NUMAAffinity: slices.Clone(nodes), Type: name, Size: size})
		if r := reuse[best.NUMANodes][name]; r >= size {
			size = 0
		} else {
			size -= r
		}
		take(ms, nodes, name, size)
	}
	return blocks, nil
}

// take is upstream's updateMachineState: size bytes of one type from the
// nodes in turn, each node counting one more assignment in this group.
func take(ms state.NUMANodeMap, nodes []int, name corev1.ResourceName, size uint64) {
	for _, id := range nodes {
		ms[id].NumberOfAssignments++
		ms[id].Cells = slices.Clone(nodes)
		t := ms[id].MemoryMap[name]
		if size == 0 || t == nil || t.Free == 0 {
			continue
		}
		n := min(size, t.Free)
		t.Reserved += n
		t.Free -= n
		size -= n
	}
}

// update is upstream's updatePodReusableMemory for one pod: a regular
// init container's blocks become reusable (the largest per NUMA set and
// type); a later container's blocks use them up.
func (r reusable) update(pod *corev1.Pod, c *corev1.Container, blocks []state.Block) {
	if isRegularInit(pod, c) {
		for _, b := range blocks {
			m := maskOf(b.NUMAAffinity)
			if r[m] == nil {
				r[m] = map[corev1.ResourceName]uint64{}
			}
			r[m][b.Type] = max(r[m][b.Type], b.Size)
		}
		return
	}
	for _, b := range blocks {
		m := maskOf(b.NUMAAffinity)
		if v := r[m][b.Type]; v != 0 {
			r[m][b.Type] = v - min(v, b.Size)
		}
	}
}

// isRegularInit says whether c is an init container that is not a
// sidecar.
func isRegularInit(pod *corev1.Pod, c *corev1.Container) bool {
	for i := range pod.Spec.InitContainers {
		if ic := &pod.Spec.InitContainers[i]; ic.Name == c.Name {
			return !podutil.IsSidecar(ic)
		}
	}
	return false
}

// shrinkInitBlocks is upstream's updateInitContainersMemoryBlocks: the
// regular init containers before c give up the block sizes c reused, so
// that the pod's blocks add up to what it holds.
func shrinkInitBlocks(entries map[string][]state.Block, pod *corev1.Pod, c *corev1.Container, blocks []state.Block) {
	for _, cb := range blocks {
		size := cb.Size
		for i := range pod.Spec.InitContainers {
			ic := &pod.Spec.InitContainers[i]
			if ic.Name == c.Name || size == 0 {
				break
			}
			if podutil.IsSidecar(ic) {
				continue
			}
			for j := range entries[ic.Name] {
				b := &entries[ic.Name][j]
				if b.Size == 0 || b.Type != cb.Type || maskOf(b.NUMAAffinity) != maskOf(cb.NUMAAffinity) {
					continue
				}
				n := min(size, b.Size)
				b.Size -= n
				size -= n
			}
		}
	}
}

// Release is upstream's RemoveContainer: the container's blocks go back
// to their nodes (a node with no assignment left leaves its group). It
// returns the new state; st is not changed.
func Release(st state.Checkpoint, podUID, container string) state.Checkpoint {
	blocks, ok := st.Entries[podUID][container]
	if !ok {
		return st
	}
	out := state.Checkpoint{PolicyName: st.PolicyName, MachineState: st.MachineState.Clone(), Entries: st.Entries.Clone()}
	delete(out.Entries[podUID], container)
	if len(out.Entries[podUID]) == 0 {
		delete(out.Entries, podUID)
	}
	for _, b := range blocks {
		size := b.Size
		for _, id := range b.NUMAAffinity {
			s := out.MachineState[id]
			if s == nil {
				continue
			}
			s.NumberOfAssignments--
			if s.NumberOfAssignments == 0 {
				s.Cells = []int{id}
			}
			t := s.MemoryMap[b.Type]
			if size == 0 || t == nil || t.Reserved == 0 {
				continue
			}
			n := min(size, t.Reserved)
			t.Free += n
			t.Reserved -= n
			size -= n
		}
	}
	return out
}
