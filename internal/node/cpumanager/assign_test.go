package cpumanager

import (
	"testing"
)

// TestTakeByTopology holds cases of upstream's TestTakeByTopologyNUMAPacked
// and TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption
// (cpu_assignment_test.go), with their expected sets.
func TestTakeByTopology(t *testing.T) {
	tests := []struct {
		name      string
		topo      *Topology
		spread    bool
		available string
		num       int
		wantErr   string
		want      string
	}{
		{name: "more cpus than are available", topo: topoSingleSocketHT, available: "0,2,4,6", num: 5,
			wantErr: "not enough cpus available to satisfy request: requested=5, available=4"},
		{name: "zero cpus", topo: topoSingleSocketHT, available: "0-7", num: 0, want: ""},
		{name: "one cpu from single socket with HT", topo: topoSingleSocketHT, available: "0-7", num: 1, want: "0"},
		{name: "one cpu, some taken: the fullest core", topo: topoSingleSocketHT, available: "1,3,5-7", num: 1, want: "6"},
		{name: "two cpus: one core", topo: topoSingleSocketHT, available: "0-7", num: 2, want: "0,4"},
		{name: "all cpus", topo: topoSingleSocketHT, available: "0-7", num: 8, want: "0-7"},
		{name: "two cpus, only one core totally free", topo: topoSingleSocketHT, available: "0-3,6", num: 2, want: "2,6"},
		{name: "a socket of a dual socket with HT", topo: topoDualSocketHT, available: "0-11", num: 6, want: "0,2,4,6,8,10"},
		{name: "a socket of dual socket with multi-numa-per-socket", topo: topoDualSocketMultiNumaPerSocketHT, available: "0-79", num: 40, want: "0-19,40-59"},
		{name: "a NUMA node of dual socket with multi-numa-per-socket", topo: topoDualSocketMultiNumaPerSocketHT, available: "0-79", num: 20, want: "0-9,40-49"},
		{name: "a NUMA node with one NUMA node already taken", topo: topoDualSocketMultiNumaPerSocketHT, available: "10-39,50-79", num: 20, want: "10-19,50-59"},
		{name: "one cpu from dual socket: core from socket 0", topo: topoDualSocketHT, available: "1-5,7-11", num: 1, want: "2"},
		{name: "4 full cores, 3 filling the first NUMA node", topo: topoDualSocketHT, available: "0-11", num: 8, want: "0,6,2,8,4,10,1,7"},
		{name: "32 full cores, 30 filling the first 3 NUMA nodes", topo: topoDualSocketMultiNumaPerSocketHT, available: "0-79", num: 64, want: "0-29,40-69,30,31,70,71"},
		// More NUMA nodes than sockets: the socket with the fewest free
		// CPUs is walked first (socket 0: 30, socket 1: 32), although NUMA
		// node 3 (socket 1) has the fewest of the NUMA nodes.
		{name: "sockets first when NUMA nodes are smaller", topo: topoDualSocketMultiNumaPerSocketHT, available: "5-9,15-29,38-79", num: 1, want: "40"},
		{name: "spread: 3 cpus on single socket", topo: topoSingleSocketHT, spread: true, available: "0-7", num: 3, want: "0,1,2"},
		{name: "spread: 2 cpus from dual socket", topo: topoDualSocketHT, spread: true, available: "0-11", num: 2, want: "0,2"},
		{name: "spread: 8 cpus from dual socket", topo: topoDualSocketHT, spread: true, available: "0-11", num: 8, want: "0,2,4,6,8,10,1,3"},
		{name: "spread: 8 cpus from multi-numa-per-socket", topo: topoDualSocketMultiNumaPerSocketHT, spread: true, available: "0-79", num: 8, want: "0-7"},
		{name: "spread: 6 cpus from dual socket", topo: topoDualSocketHT, spread: true, available: "0-11", num: 6, want: "0,2,4,6,8,10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := takeByTopology(tt.topo, mustParse(t, tt.available), tt.num, tt.spread)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("takeByTopology error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("takeByTopology: %v", err)
			}
			if want := mustParse(t, tt.want); !got.Equals(want) {
				t.Errorf("takeByTopology = %s, want %s", got, want)
			}
		})
	}
}
