package agent

import (
	"context"
	"fmt"

	"github.com/berthk8s/berth/internal/platform/iptables"
)

// runIPTables keeps the iptables utility chains (makeIPTablesUtilChains)
// until ctx ends, as upstream's kubelet does from its start.
func (n *node) runIPTables(ctx context.Context) error {
	m, err := iptables.New(iptables.Config{Clock: n.clock})
	if err != nil {
		return fmt.Errorf("create iptables manager: %w", err)
	}
	return m.Run(ctx)
}
