package topology

import (
	"fmt"

	"github.com/berthk8s/berth/internal/platform/machine"
)

// NUMAInfo is the host's NUMA nodes and, when prefer-closest-numa-nodes
// is set, their distances (Distances[i][j] from node i to node j).
type NUMAInfo struct {
	Nodes     []int
	Distances map[int][]uint64
}

// DefaultAffinity is the mask of every NUMA node.
func (n *NUMAInfo) DefaultAffinity() Mask {
	m, _ := NewMask(n.Nodes...)
	return m
}

// narrowest is upstream's NUMAInfo.Narrowest.
func narrowest(m1, m2 Mask) Mask {
	if m1.IsNarrowerThan(m2) {
		return m1
	}
	return m2
}

// closest is upstream's NUMAInfo.Closest: the narrower mask, or of two as
// wide the one of the lower average distance, or of equal distance the
// lower one.
func (n *NUMAInfo) closest(m1, m2 Mask) Mask {
	if m1.Count() != m2.Count() {
		return narrowest(m1, m2)
	}
	d1, d2 := n.averageDistance(m1), n.averageDistance(m2)
	if d1 == d2 {
		if m1 < m2 {
			return m1
		}
		return m2
	}
	if d1 < d2 {
		return m1
	}
	return m2
}

// averageDistance is upstream's CalculateAverageFor.
func (n *NUMAInfo) averageDistance(m Mask) float64 {
	if m.Count() == 0 {
		return 0
	}
	var sum, count float64
	for _, a := range m.Bits() {
		for _, b := range m.Bits() {
			row := n.Distances[a]
			if b < len(row) {
				sum += float64(row[b])
			}
			count++
		}
	}
	return sum / count
}

// NUMAInfoOf is the NUMA information of the host's topology
// (machine.ReadTopology), as upstream's NewNUMAInfo builds it from
// cadvisor's nodes: their IDs and, with withDistances
// (prefer-closest-numa-nodes), their distances, which every node must
// have.
func NUMAInfoOf(host *machine.Topology, withDistances bool) (*NUMAInfo, error) {
	info := &NUMAInfo{Distances: map[int][]uint64{}}
	for _, n := range host.Nodes {
		info.Nodes = append(info.Nodes, n.ID)
		info.Distances[n.ID] = nil
		if !withDistances {
			continue
		}
		if n.Distances == nil {
			return nil, fmt.Errorf("error getting NUMA distances of node %d: no distance file", n.ID)
		}
		info.Distances[n.ID] = append([]uint64(nil), n.Distances...)
	}
	return info, nil
}
