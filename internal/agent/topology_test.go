package agent

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/topology"
)

func TestNewTopologyManager(t *testing.T) {
	numaNodes := func(n int) fstest.MapFS {
		sys := fstest.MapFS{}
		for i := range n {
			sys[fmt.Sprintf("node/node%d/distance", i)] = &fstest.MapFile{Data: []byte("10")}
		}
		return sys
	}
	for _, tt := range []struct {
		name, policy string
		nodes        int
		wantManager  bool
		wantErr      string
	}{
		{name: "none builds nothing", policy: "none", nodes: 9},
		{name: "restricted on two nodes", policy: "restricted", nodes: 2, wantManager: true},
		{name: "more NUMA nodes than allowed refuse the start", policy: "best-effort", nodes: 9,
			wantErr: "start topology manager: unsupported on machines with more than 8 NUMA Nodes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{}
			cfg.Kubelet.TopologyManagerPolicy, cfg.Kubelet.TopologyManagerScope = tt.policy, "container"
			if tt.policy != "none" {
				cfg.TopologyManagerOptions = &topology.Options{MaxAllowableNUMANodes: 8}
			}
			m, err := (&node{cfg: cfg}).newTopologyManager(nil, numaNodes(tt.nodes))
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
