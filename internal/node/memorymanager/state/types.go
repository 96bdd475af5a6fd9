package state

import (
	v1 "k8s.io/api/core/v1"
)

// MemoryTable is one memory type's accounting on one NUMA node, in bytes:
// Allocatable is TotalMemSize less SystemReserved, and Free plus Reserved
// (what containers hold) is Allocatable.
type MemoryTable struct {
	TotalMemSize   uint64 `json:"total"`
	SystemReserved uint64 `json:"systemReserved"`
	Allocatable    uint64 `json:"allocatable"`
	Reserved       uint64 `json:"reserved"`
	Free           uint64 `json:"free"`
}

// NUMANodeState is one NUMA node: how many container blocks use it, its
// memory per type (memory, hugepages-<size>), and the NUMA nodes it is
// grouped with (Cells, itself included), as upstream's multi-NUMA groups.
type NUMANodeState struct {
	NumberOfAssignments int                              `json:"numberOfAssignments"`
	MemoryMap           map[v1.ResourceName]*MemoryTable `json:"memoryMap"`
	Cells               []int                            `json:"cells"`
}

// NUMANodeMap is the machine state: each NUMA node by its ID.
type NUMANodeMap map[int]*NUMANodeState

// Clone returns a deep copy, so a pure function can change it freely.
func (nm NUMANodeMap) Clone() NUMANodeMap {
	if nm == nil {
		return nil
	}
	out := make(NUMANodeMap, len(nm))
	for id, s := range nm {
		if s == nil {
			out[id] = nil
			continue
		}
		c := &NUMANodeState{NumberOfAssignments: s.NumberOfAssignments, Cells: append([]int{}, s.Cells...)}
		if s.MemoryMap != nil {
			c.MemoryMap = make(map[v1.ResourceName]*MemoryTable, len(s.MemoryMap))
			for t, mt := range s.MemoryMap {
				cp := *mt
				c.MemoryMap[t] = &cp
			}
		}
		out[id] = c
	}
	return out
}

// Block is memory of one type that a container holds on a set of NUMA
// nodes.
type Block struct {
	NUMAAffinity []int           `json:"numaAffinity"`
	Type         v1.ResourceName `json:"type"`
	Size         uint64          `json:"size"`
}

// ContainerMemoryAssignments is pod UID -> container name -> its blocks.
type ContainerMemoryAssignments map[string]map[string][]Block

// Clone returns a deep copy.
func (as ContainerMemoryAssignments) Clone() ContainerMemoryAssignments {
	if as == nil {
		return nil
	}
	out := make(ContainerMemoryAssignments, len(as))
	for pod, cs := range as {
		out[pod] = make(map[string][]Block, len(cs))
		for c, blocks := range cs {
			bs := make([]Block, len(blocks))
			for i, b := range blocks {
				bs[i] = Block{NUMAAffinity: append([]int{}, b.NUMAAffinity...), Type: b.Type, Size: b.Size}
			}
			out[pod][c] = bs
		}
	}
	return out
}

// PodEntry is a pod's own blocks (pod-level resources). berth, as
// upstream with PodLevelResourceManagers off (its default), reads them
// from older files only to verify their checksum, and keeps none.
type PodEntry struct {
	MemoryBlocks []Block `json:"memoryBlocks,omitempty"`
}

// PodMemoryAssignments is pod UID -> its PodEntry.
type PodMemoryAssignments map[string]PodEntry
