package memorymanager

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
)

// Static is the static policy's fixed inputs: the machine's NUMA nodes
// and what reservedMemory keeps from pods on each. It is a plain value;
// every method is a pure function of it and its arguments.
type Static struct {
	nodes    []NUMANode
	reserved SystemReserved
}

// NewStatic checks reservedMemory against the machine and the node's
// memory reservation (kubeReserved + systemReserved + hard eviction, as
// nodestatus.Reservation computes it), as upstream's NewManager and
// NewPolicyStatic: some memory must be reserved for the system.
func NewStatic(nodes []NUMANode, reservation corev1.ResourceList, reserved []kubeletconfigv1beta1.MemoryReservation) (*Static, error) {
	sr, err := systemReserved(nodes, reservation, reserved)
	if err != nil {
		return nil, err
	}
	var total uint64
	for _, n := range sr {
		total += n[corev1.ResourceMemory]
	}
	if total == 0 {
		return nil, fmt.Errorf("[memorymanager] you should specify the system reserved memory")
	}
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b NUMANode) int { return a.ID - b.ID })
	return &Static{nodes: nodes, reserved: sr}, nil
}

// DefaultMachineState is the machine state with nothing assigned, as
// upstream's getDefaultMachineState: on each node, each huge page size's
// total less its reservation, and memory less its reservation and less
// the node's huge pages.
func (p *Static) DefaultMachineState() state.NUMANodeMap {
	ms := state.NUMANodeMap{}
	for _, n := range p.nodes {
		s := &state.NUMANodeState{MemoryMap: map[corev1.ResourceName]*state.MemoryTable{}, Cells: []int{n.ID}}
		var huge uint64
		for name, total := range n.HugePages {
			r := p.reserved[n.ID][name]
			s.MemoryMap[name] = &state.MemoryTable{TotalMemSize: total, SystemReserved: r, Allocatable: total - r, Free: total - r}
			huge += total
		}
		r := p.reserved[n.ID][corev1.ResourceMemory]
		a := n.Memory - r - huge
		s.MemoryMap[corev1.ResourceMemory] = &state.MemoryTable{TotalMemSize: n.Memory, SystemReserved: r, Allocatable: a, Free: a}
		ms[n.ID] = s
	}
	return ms
}
