package memorymanager

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

// Restore checks a restored checkpoint as upstream's validateState: an
// empty machine state (a new checkpoint) becomes the default one, unless
// it has assignments; otherwise the machine state must be what the
// assignments make of the default one, or the node has changed under it.
func (p *Static) Restore(c state.Checkpoint) (state.Checkpoint, error) {
	if len(c.MachineState) == 0 {
		if len(c.Entries) != 0 {
			return c, fmt.Errorf("[memorymanager] machine state can not be empty when it has memory assignments")
		}
		c.MachineState = p.DefaultMachineState()
		return c, nil
	}
	want := p.DefaultMachineState()
	for pod, containers := range c.Entries {
		for name, blocks := range containers {
			if err := expect(want, blocks, pod, name); err != nil {
				return c, err
			}
		}
	}
	if !machineStatesEqual(c.MachineState, want) {
		return c, fmt.Errorf("[memorymanager] the expected machine state is different from the real one")
	}
	return c, nil
}

// expect is upstream's updateExpectedMachineState: one container's
// blocks taken from ms.
func expect(ms state.NUMANodeMap, blocks []state.Block, pod, container string) error {
	for _, b := range blocks {
		for _, id := range b.NUMAAffinity {
			n, ok := ms[id]
			if !ok {
				return fmt.Errorf("[memorymanager] (pod: %s, container: %s) the memory assignment uses the NUMA that does not exist", pod, container)
			}
			if _, ok := n.MemoryMap[b.Type]; !ok {
				return fmt.Errorf("[memorymanager] (pod: %s, container: %s) the memory assignment uses memory resource that does not exist", pod, container)
			}
		}
		take(ms, b.NUMAAffinity, b.Type, b.Size)
	}
	return nil
}

// machineStatesEqual is upstream's areMachineStatesEqual: the same nodes,
// assignments, groups and sizes, and per group the same free and reserved
// memory (how a group's memory spreads over its nodes may differ).
func machineStatesEqual(a, b state.NUMANodeMap) bool {
	if len(a) != len(b) {
		return false
	}
	for id, na := range a {
		nb, ok := b[id]
		if !ok || na.NumberOfAssignments != nb.NumberOfAssignments || maskOf(na.Cells) != maskOf(nb.Cells) || len(na.MemoryMap) != len(nb.MemoryMap) {
			return false
		}
		for name, ta := range na.MemoryMap {
			tb, ok := nb.MemoryMap[name]
			if !ok || ta.TotalMemSize != tb.TotalMemSize || ta.SystemReserved != tb.SystemReserved || ta.Allocatable != tb.Allocatable {
				return false
			}
			if groupSum(a, na.Cells, name) != groupSum(b, na.Cells, name) {
				return false
			}
		}
	}
	return true
}

// groupSum is a group's free and reserved memory of one type.
func groupSum(ms state.NUMANodeMap, cells []int, name corev1.ResourceName) [2]uint64 {
	var s [2]uint64
	for _, id := range slices.Clone(cells) {
		if n := ms[id]; n != nil && n.MemoryMap[name] != nil {
			s[0] += n.MemoryMap[name].Free
			s[1] += n.MemoryMap[name].Reserved
		}
	}
	return s
}
