package agent

import (
	"fmt"

	"github.com/berthk8s/berth/internal/node/dra"
)

// newDRA builds the DRA manager over <root-dir>/dra_manager_state: its
// drivers register through the plugin manager, the syncer prepares pods'
// claims with it, the runtime manager gives containers their CDI devices.
// Standalone it has no API client: a pod with claims waits, saying so.
func (n *node) newDRA() (*dra.Manager, error) {
	m, err := dra.New(dra.Config{Client: n.cluster.apiClient(), NodeName: n.cfg.NodeName, StateDir: n.cfg.RootDir, Clock: n.clock})
	if err != nil {
		return nil, fmt.Errorf("create DRA manager: %w", err)
	}
	return m, nil
}
