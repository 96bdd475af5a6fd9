package cpumanager

import "github.com/berthk8s/berth/internal/platform/machine"

// TopologyOf is the CPU topology of the host's (machine.ReadTopology), as
// upstream's topology.Discover builds it from cadvisor's machine info:
// each online CPU's socket, core, NUMA node and uncore cache, counted.
func TopologyOf(host *machine.Topology) *Topology {
	d := make(CPUDetails, len(host.CPUs))
	for id, c := range host.CPUs {
		d[id] = CPUInfo{NUMANodeID: c.NUMANodeID, SocketID: c.SocketID, CoreID: c.CoreID, UncoreCacheID: c.UncoreCacheID}
	}
	return NewTopology(d)
}
