package memorymanager

import (
	"math/bits"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

// mask is a set of NUMA node IDs (below 64), as upstream's
// topologymanager/bitmask.
type mask uint64

func maskOf(ids []int) mask {
	var m mask
	for _, id := range ids {
		m |= 1 << uint(id)
	}
	return m
}

func (m mask) bits() []int {
	var out []int
	for id := 0; id < 64; id++ {
		if m&(1<<uint(id)) != 0 {
			out = append(out, id)
		}
	}
	return out
}

func (m mask) count() int { return bits.OnesCount64(uint64(m)) }

// narrowerThan is upstream's IsNarrowerThan: fewer nodes, or as many and
// a smaller value.
func (m mask) narrowerThan(o mask) bool {
	if m.count() == o.count() {
		return m < o
	}
	return m.count() < o.count()
}

// Hint is a NUMA affinity that can hold a request, and whether it is one
// of the narrowest such (upstream's TopologyHint).
type Hint struct {
	NUMANodes mask
	Preferred bool
}

// subsets calls f on every non-empty subset of ids, as upstream's
// IterateBitMasks.
func subsets(ids []int, f func(mask)) {
	n := len(ids)
	for set := uint64(1); set < 1<<uint(n); set++ {
		var m mask
		for i := 0; i < n; i++ {
			if set&(1<<uint(i)) != 0 {
				m |= 1 << uint(ids[i])
			}
		}
		f(m)
	}
}

// reusable is what a pod's regular init containers hold that the
// containers after them may reuse: NUMA set -> memory type -> bytes
// (upstream's initContainersReusableMemory for one pod).
type reusable map[mask]map[corev1.ResourceName]uint64

// calculateHints is upstream's calculateHints: every NUMA set whose
// allocatable memory holds the request, that keeps single- and multi-NUMA
// groups apart, and whose free memory (with what the pod's init
// containers leave for reuse) holds it; the narrowest are preferred.
func calculateHints(ms state.NUMANodeMap, reuse reusable, req map[corev1.ResourceName]uint64) []Hint {
	ids := make([]int, 0, len(ms))
	for id := range ms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	minSize := len(ids)
	var hints []Hint
	subsets(ids, func(m mask) {
		nodes := m.bits()
		free, allocatable := map[corev1.ResourceName]uint64{}, map[corev1.ResourceName]uint64{}
		for _, id := range nodes {
			for name := range req {
				if t := ms[id].MemoryMap[name]; t != nil {
					free[name] += t.Free
					allocatable[name] += t.Allocatable
				}
			}
		}
		for name, size := range req {
			if allocatable[name] < size {
				return
			}
		}
		minSize = min(minSize, m.count())
		if len(nodes) == 1 && len(ms[nodes[0]].Cells) > 1 {
			return
		}
		if violatesGroups(ms, m) {
			return
		}
		for name, size := range req {
			if free[name]+reuse[m][name] < size {
				return
			}
		}
		hints = append(hints, Hint{NUMANodes: m})
	})
	for i := range hints {
		hints[i].Preferred = hints[i].NUMANodes.count() == minSize
	}
	return hints
}

// violatesGroups is upstream's isAffinityViolatingNUMAAllocations: a node
// already in use cannot join a multi-NUMA set if it holds single-NUMA
// memory or belongs to another group.
func violatesGroups(ms state.NUMANodeMap, m mask) bool {
	nodes := m.bits()
	if len(nodes) == 1 {
		return false
	}
	for _, id := range nodes {
		s := ms[id]
		if s.NumberOfAssignments == 0 {
			continue
		}
		if len(s.Cells) == 1 || maskOf(s.Cells) != m {
			return true
		}
	}
	return false
}

// bestHint is upstream's findBestHint: a preferred hint before others,
// then the narrowest.
func bestHint(hints []Hint) (Hint, bool) {
	if len(hints) == 0 {
		return Hint{}, false
	}
	best := hints[0]
	for _, h := range hints[1:] {
		if (h.Preferred && !best.Preferred) || (h.Preferred == best.Preferred && h.NUMANodes.narrowerThan(best.NUMANodes)) {
			best = h
		}
	}
	return best, true
}
