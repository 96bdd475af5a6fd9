package cpumanager

import (
	"fmt"

	"k8s.io/utils/cpuset"
)

// CPUInfo is where one logical CPU sits, as upstream's
// cpumanager/topology.CPUInfo. CoreID is the lowest CPU number of the core's
// threads, unique across the machine (not sysfs' core_id, which repeats per
// socket).
type CPUInfo struct {
	NUMANodeID    int
	SocketID      int
	CoreID        int
	UncoreCacheID int
}

// CPUDetails maps a logical CPU to where it sits. It is a plain value:
// methods return new sets and never modify it.
type CPUDetails map[int]CPUInfo

// Topology is the machine's CPU topology, as upstream's
// cpumanager/topology.CPUTopology. A plain value, read-only once built.
type Topology struct {
	NumCPUs        int
	NumCores       int
	NumSockets     int
	NumNUMANodes   int
	NumUncoreCache int
	CPUDetails     CPUDetails
}

// NewTopology builds a Topology from CPU details, counting as upstream's
// Discover does.
func NewTopology(d CPUDetails) *Topology {
	return &Topology{
		NumCPUs:        len(d),
		NumCores:       d.Cores().Size(),
		NumSockets:     d.Sockets().Size(),
		NumNUMANodes:   d.NUMANodes().Size(),
		NumUncoreCache: d.UncoreCaches().Size(),
		CPUDetails:     d,
	}
}

// CPUsPerCore is the number of hardware threads per core (0 if unknown).
func (t *Topology) CPUsPerCore() int {
	if t.NumCores == 0 {
		return 0
	}
	return t.NumCPUs / t.NumCores
}

// CPUsPerSocket is the number of CPUs per socket (0 if unknown).
func (t *Topology) CPUsPerSocket() int {
	if t.NumSockets == 0 {
		return 0
	}
	return t.NumCPUs / t.NumSockets
}

// CPUCoreID returns the core a CPU belongs to.
func (t *Topology) CPUCoreID(cpu int) (int, error) {
	info, ok := t.CPUDetails[cpu]
	if !ok {
		return -1, fmt.Errorf("unknown CPU ID: %d", cpu)
	}
	return info.CoreID, nil
}

// KeepOnly returns the details of the CPUs in cpus only.
func (d CPUDetails) KeepOnly(cpus cpuset.CPUSet) CPUDetails {
	out := CPUDetails{}
	for cpu, info := range d {
		if cpus.Contains(cpu) {
			out[cpu] = info
		}
	}
	return out
}

// collect returns the set of key(info) over the CPUs for which keep holds.
func (d CPUDetails) collect(keep func(CPUInfo) bool, key func(cpu int, info CPUInfo) int) cpuset.CPUSet {
	var ids []int
	for cpu, info := range d {
		if keep(info) {
			ids = append(ids, key(cpu, info))
		}
	}
	return cpuset.New(ids...)
}

func all(CPUInfo) bool { return true }

func in(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func cpuKey(cpu int, _ CPUInfo) int  { return cpu }
func coreKey(_ int, i CPUInfo) int   { return i.CoreID }
func socketKey(_ int, i CPUInfo) int { return i.SocketID }
func numaKey(_ int, i CPUInfo) int   { return i.NUMANodeID }
func uncoreKey(_ int, i CPUInfo) int { return i.UncoreCacheID }
func inNUMA(ids []int) func(CPUInfo) bool {
	return func(i CPUInfo) bool { return in(ids, i.NUMANodeID) }
}
func inSocket(ids []int) func(CPUInfo) bool {
	return func(i CPUInfo) bool { return in(ids, i.SocketID) }
}
func inCore(ids []int) func(CPUInfo) bool { return func(i CPUInfo) bool { return in(ids, i.CoreID) } }

// CPUs returns every CPU.
func (d CPUDetails) CPUs() cpuset.CPUSet { return d.collect(all, cpuKey) }

// Cores returns every core ID.
func (d CPUDetails) Cores() cpuset.CPUSet { return d.collect(all, coreKey) }

// Sockets returns every socket ID.
func (d CPUDetails) Sockets() cpuset.CPUSet { return d.collect(all, socketKey) }

// NUMANodes returns every NUMA node ID.
func (d CPUDetails) NUMANodes() cpuset.CPUSet { return d.collect(all, numaKey) }

// UncoreCaches returns every uncore (L3) cache ID.
func (d CPUDetails) UncoreCaches() cpuset.CPUSet { return d.collect(all, uncoreKey) }

// CPUsInNUMANodes returns the CPUs of the given NUMA nodes.
func (d CPUDetails) CPUsInNUMANodes(ids ...int) cpuset.CPUSet { return d.collect(inNUMA(ids), cpuKey) }

// CPUsInSockets returns the CPUs of the given sockets.
func (d CPUDetails) CPUsInSockets(ids ...int) cpuset.CPUSet {
	return d.collect(inSocket(ids), cpuKey)
}

// CPUsInCores returns the CPUs of the given cores.
func (d CPUDetails) CPUsInCores(ids ...int) cpuset.CPUSet { return d.collect(inCore(ids), cpuKey) }

// CoresInNUMANodes returns the cores of the given NUMA nodes.
func (d CPUDetails) CoresInNUMANodes(ids ...int) cpuset.CPUSet {
	return d.collect(inNUMA(ids), coreKey)
}

// CoresInSockets returns the cores of the given sockets.
func (d CPUDetails) CoresInSockets(ids ...int) cpuset.CPUSet {
	return d.collect(inSocket(ids), coreKey)
}

// SocketsInNUMANodes returns the sockets of the given NUMA nodes.
func (d CPUDetails) SocketsInNUMANodes(ids ...int) cpuset.CPUSet {
	return d.collect(inNUMA(ids), socketKey)
}

// NUMANodesInSockets returns the NUMA nodes of the given sockets.
func (d CPUDetails) NUMANodesInSockets(ids ...int) cpuset.CPUSet {
	return d.collect(inSocket(ids), numaKey)
}
