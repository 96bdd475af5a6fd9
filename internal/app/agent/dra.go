package agent

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/dra"
)

// newDRA builds the DRA manager over <root-dir>/dra_manager_state: its
// drivers register through the plugin manager, the syncer prepares pods'
// claims with it, the runtime manager gives containers their CDI devices.
// Standalone it has no API client: a pod with claims waits, saying so.
// With ResourceHealthStatus it follows the drivers' device health.
func (n *node) newDRA() (*dra.Manager, error) {
	m, err := dra.New(dra.Config{Client: n.cluster.apiClient(), NodeName: n.cfg.NodeName, StateDir: n.cfg.RootDir, Clock: n.clock,
		Health: n.cfg.ResourceHealthStatus(), HealthMessages: n.cfg.ResourceHealthStatusMessage()})
	if err != nil {
		return nil, fmt.Errorf("create DRA manager: %w", err)
	}
	return m, nil
}

// healthUpdates is a manager's channel of pods whose devices' health
// changed, for the sync loop, only with ResourceHealthStatus (upstream's
// container manager fans the managers' updates in only with the gate).
func healthUpdates(cfg *config.Config, ch <-chan types.UID) <-chan types.UID {
	if !cfg.ResourceHealthStatus() {
		return nil
	}
	return ch
}
