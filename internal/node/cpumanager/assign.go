package cpumanager

import (
	"fmt"
	"sort"

	"k8s.io/utils/cpuset"
)

// takeByTopology picks numCPUs of available as upstream's
// takeByTopologyNUMAPacked (cpu_assignment.go) does, a topology-aware best
// fit: whole NUMA nodes and sockets (NUMA nodes first when they are
// larger), then whole cores (unless spread), then single CPUs, preferring
// the fullest cores and sockets so that free ones stay whole. spread is
// distribute-cpus-across-cores: single CPUs socket by socket, no whole
// cores. Pure.
func takeByTopology(topo *Topology, available cpuset.CPUSet, numCPUs int, spread bool) (cpuset.CPUSet, error) {
	acc := newAccumulator(topo, available, numCPUs, spread)
	if acc.satisfied() {
		return acc.result, nil
	}
	if acc.failed() {
		return cpuset.New(), fmt.Errorf("not enough cpus available to satisfy request: requested=%d, available=%d", numCPUs, available.Size())
	}
	steps := []func(){acc.takeFullSockets, acc.takeFullNUMANodes}
	if acc.numaFirst {
		steps = []func(){acc.takeFullNUMANodes, acc.takeFullSockets}
	}
	if !spread {
		steps = append(steps, acc.takeFullCores)
	}
	steps = append(steps, acc.takeRemainingCPUs)
	for _, step := range steps {
		step()
		if acc.satisfied() {
			return acc.result, nil
		}
	}
	return cpuset.New(), fmt.Errorf("failed to allocate cpus")
}

// accumulator is upstream's cpuAccumulator: the CPUs taken so far and the
// details of those still free. Used by one call of takeByTopology only.
type accumulator struct {
	topo    *Topology
	details CPUDetails
	needed  int
	result  cpuset.CPUSet
	// numaFirst: NUMA nodes are at least as large as sockets (sockets >=
	// NUMA nodes), so whole NUMA nodes are taken before whole sockets.
	numaFirst bool
	spread    bool
}

func newAccumulator(topo *Topology, available cpuset.CPUSet, numCPUs int, spread bool) *accumulator {
	return &accumulator{
		topo:      topo,
		details:   topo.CPUDetails.KeepOnly(available),
		needed:    numCPUs,
		result:    cpuset.New(),
		numaFirst: topo.NumSockets >= topo.NumNUMANodes,
		spread:    spread,
	}
}

func (a *accumulator) satisfied() bool { return a.needed < 1 }
func (a *accumulator) failed() bool    { return a.needed > a.details.CPUs().Size() }

func (a *accumulator) take(cpus cpuset.CPUSet) {
	a.result = a.result.Union(cpus)
	a.details = a.details.KeepOnly(a.details.CPUs().Difference(a.result))
	a.needed -= cpus.Size()
}

// sortIDs orders ids by how many free CPUs each has, fewest first, then by
// ID: upstream's cpuAccumulator.sort.
func (a *accumulator) sortIDs(ids []int, cpus func(ids ...int) cpuset.CPUSet) []int {
	sort.Slice(ids, func(i, j int) bool {
		ni, nj := cpus(ids[i]).Size(), cpus(ids[j]).Size()
		if ni != nj {
			return ni < nj
		}
		return ids[i] < ids[j]
	})
	return ids
}

// sortedNUMANodes, sortedSockets and sortedCores are the free units in the
// order upstream's numaFirst and socketsFirst walk them: the larger unit
// outside, the smaller sorted within it.
func (a *accumulator) sortedNUMANodes() []int {
	d := a.details
	if a.numaFirst {
		return a.sortIDs(d.NUMANodes().UnsortedList(), d.CPUsInNUMANodes)
	}
	var out []int
	for _, s := range a.sortedSockets() {
		out = append(out, a.sortIDs(d.NUMANodesInSockets(s).UnsortedList(), d.CPUsInNUMANodes)...)
	}
	return out
}

func (a *accumulator) sortedSockets() []int {
	d := a.details
	if !a.numaFirst {
		return a.sortIDs(d.Sockets().UnsortedList(), d.CPUsInSockets)
	}
	var out []int
	for _, n := range a.sortedNUMANodes() {
		out = append(out, a.sortIDs(d.SocketsInNUMANodes(n).UnsortedList(), d.CPUsInSockets)...)
	}
	return out
}

func (a *accumulator) sortedCores() []int {
	d := a.details
	var out []int
	if a.numaFirst {
		for _, s := range a.sortedSockets() {
			out = append(out, a.sortIDs(d.CoresInSockets(s).UnsortedList(), d.CPUsInCores)...)
		}
		return out
	}
	for _, n := range a.sortedNUMANodes() {
		out = append(out, a.sortIDs(d.CoresInNUMANodes(n).UnsortedList(), d.CPUsInCores)...)
	}
	return out
}

// sortedCPUs is upstream's packed order (core by core, the fullest cores
// first) or, with spread, its spread order (socket by socket).
func (a *accumulator) sortedCPUs() []int {
	var out []int
	if a.spread {
		for _, s := range a.sortedSockets() {
			out = append(out, a.details.CPUsInSockets(s).List()...)
		}
		return out
	}
	for _, c := range a.sortedCores() {
		out = append(out, a.details.CPUsInCores(c).List()...)
	}
	return out
}

func (a *accumulator) takeFullNUMANodes() {
	for _, n := range a.sortedNUMANodes() {
		all := a.topo.CPUDetails.CPUsInNUMANodes(n)
		if a.details.CPUsInNUMANodes(n).Size() != all.Size() || a.needed < all.Size() {
			continue
		}
		a.take(all)
	}
}

func (a *accumulator) takeFullSockets() {
	for _, s := range a.sortedSockets() {
		all := a.topo.CPUDetails.CPUsInSockets(s)
		if a.details.CPUsInSockets(s).Size() != a.topo.CPUsPerSocket() || a.needed < all.Size() {
			continue
		}
		a.take(all)
	}
}

func (a *accumulator) takeFullCores() {
	for _, c := range a.sortedCores() {
		all := a.topo.CPUDetails.CPUsInCores(c)
		if a.details.CPUsInCores(c).Size() != a.topo.CPUsPerCore() || a.needed < all.Size() {
			continue
		}
		a.take(all)
	}
}

func (a *accumulator) takeRemainingCPUs() {
	for _, cpu := range a.sortedCPUs() {
		a.take(cpuset.New(cpu))
		if a.satisfied() {
			return
		}
	}
}
