package cpumanager

import (
	"testing"

	"k8s.io/utils/cpuset"
)

// fakeTopology builds a topology as upstream's test fixtures number it:
// core c has the threads c, c+cores, c+2*cores, ...; where places each core
// on a socket and a NUMA node.
func fakeTopology(cores, threads int, where func(core int) (socket, numa int)) *Topology {
	d := CPUDetails{}
	for c := 0; c < cores; c++ {
		socket, numa := where(c)
		for t := 0; t < threads; t++ {
			d[c+t*cores] = CPUInfo{CoreID: c, SocketID: socket, NUMANodeID: numa, UncoreCacheID: socket}
		}
	}
	return NewTopology(d)
}

// The topologies of upstream's cpumanager tests (policy_test.go), built
// rather than listed.
var (
	// topoSingleSocketHT: 8 CPUs, 4 cores with 2 threads, one socket.
	topoSingleSocketHT = fakeTopology(4, 2, func(int) (int, int) { return 0, 0 })
	// topoDualSocketHT: 12 CPUs, 6 cores, even cores on socket 0 (NUMA 0),
	// odd on socket 1 (NUMA 1).
	topoDualSocketHT = fakeTopology(6, 2, func(c int) (int, int) { return c % 2, c % 2 })
	// topoDualSocketMultiNumaPerSocketHT: 80 CPUs, 40 cores, 2 sockets of
	// 2 NUMA nodes of 10 cores each.
	topoDualSocketMultiNumaPerSocketHT = fakeTopology(40, 2, func(c int) (int, int) { return c / 20, c / 10 })
)

func mustParse(t *testing.T, s string) cpuset.CPUSet {
	t.Helper()
	cs, err := cpuset.Parse(s)
	if err != nil {
		t.Fatalf("parse cpuset %q: %v", s, err)
	}
	return cs
}
