package cpumanager

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/platform/machine"
)

func TestTopologyOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		cpus map[int]machine.CPU
		want *Topology
	}{
		{
			// Two sockets and NUMA nodes, two cores per socket, two threads
			// per core (CPUs c and c+4), an L3 cache per socket; CPU 7 offline.
			name: "two sockets with SMT",
			cpus: map[int]machine.CPU{
				0: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				1: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				2: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				3: {CoreID: 3, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				4: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				5: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				6: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
			},
			want: &Topology{NumCPUs: 7, NumCores: 4, NumSockets: 2, NumNUMANodes: 2, NumUncoreCache: 2, CPUDetails: CPUDetails{
				0: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				1: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				2: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				3: {CoreID: 3, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
				4: {CoreID: 0, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				5: {CoreID: 1, SocketID: 0, NUMANodeID: 0, UncoreCacheID: 10},
				6: {CoreID: 2, SocketID: 1, NUMANodeID: 1, UncoreCacheID: 11},
			}},
		},
		{
			name: "one core, two threads",
			cpus: map[int]machine.CPU{0: {}, 1: {}},
			want: &Topology{NumCPUs: 2, NumCores: 1, NumSockets: 1, NumNUMANodes: 1, NumUncoreCache: 1, CPUDetails: CPUDetails{0: {}, 1: {}}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := TopologyOf(&machine.Topology{CPUs: tt.cpus})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("TopologyOf (-want +got):\n%s", d)
			}
		})
	}
}

// TestTopologyOfHost reads this machine's sysfs: every online CPU is known.
func TestTopologyOfHost(t *testing.T) {
	host, err := machine.ReadTopology(os.DirFS(machine.SystemDir), machine.Info{MemoryBytes: 1})
	if err != nil {
		t.Skipf("no sysfs here: %v", err)
	}
	topo := TopologyOf(host)
	if topo.NumCPUs == 0 || topo.CPUsPerCore() == 0 {
		t.Errorf("TopologyOf = %+v", topo)
	}
}
