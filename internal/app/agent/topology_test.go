package agent

import (
	"errors"
	"testing"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/platform/machine"
)

func TestNewTopologyManager(t *testing.T) {
	numaNodes := func(n int) topologyReader {
		return func() (*machine.Topology, error) {
			host := &machine.Topology{}
			for i := range n {
				host.Nodes = append(host.Nodes, machine.NUMANode{ID: i, Distances: []uint64{10}})
			}
			return host, nil
		}
	}
	unreadable := func() (*machine.Topology, error) { return nil, errors.New("open \"cpu/online\": gone") }
	for _, tt := range []struct {
		name, policy string
		nodes        topologyReader
		wantManager  bool
		wantErr      string
	}{
		{name: "none builds nothing and reads nothing", policy: "none", nodes: unreadable},
		{name: "restricted on two nodes", policy: "restricted", nodes: numaNodes(2), wantManager: true},
		{name: "an unreadable topology refuses the start", policy: "restricted", nodes: unreadable,
			wantErr: `cannot discover NUMA topology: open "cpu/online": gone`},
		{name: "more NUMA nodes than allowed refuse the start", policy: "best-effort", nodes: numaNodes(9),
			wantErr: "start topology manager: unsupported on machines with more than 8 NUMA Nodes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{}
			cfg.Kubelet.TopologyManagerPolicy, cfg.Kubelet.TopologyManagerScope = tt.policy, "container"
			if tt.policy != "none" {
				cfg.TopologyManagerOptions = &topology.Options{MaxAllowableNUMANodes: 8}
			}
			m, err := (&node{cfg: cfg}).newTopologyManager(nil, nil, tt.nodes)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr || (m != nil) != tt.wantManager {
				t.Errorf("newTopologyManager = %v, %q; want a manager %t, error %q", m, gotErr, tt.wantManager, tt.wantErr)
			}
		})
	}
}
