package memorymanager

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/machine"
)

// maxNUMANodeID is the highest node ID the memory manager's masks hold.
const maxNUMANodeID = 63

// NodesOf is the memory of the host's NUMA nodes (machine.ReadTopology),
// as upstream's static policy takes it from cadvisor's nodes: each node's
// MemTotal and, per huge page size (hugepages-2Mi), the bytes reserved.
// A host without NUMA sysfs is one node 0 holding all the memory.
func NodesOf(host *machine.Topology) ([]NUMANode, error) {
	nodes := make([]NUMANode, 0, len(host.Nodes))
	for _, n := range host.Nodes {
		if n.ID < 0 || n.ID > maxNUMANodeID {
			return nil, fmt.Errorf("use NUMA node %d: unsupported ID (at most %d)", n.ID, maxNUMANodeID)
		}
		node := NUMANode{ID: n.ID, Memory: n.MemTotal, HugePages: make(map[corev1.ResourceName]uint64, len(n.HugePages))}
		for size, b := range n.HugePages {
			node.HugePages[corev1.ResourceName(corev1.ResourceHugePagesPrefix+size)] = b
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}
