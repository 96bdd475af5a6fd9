package agent

import (
	"fmt"
	"path/filepath"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
)

// newPluginManager builds the plugin manager over
// <root-dir>/plugins_registry, with upstream's metric in berth's registry.
// It has no handlers yet (CSI and DRA come with issue #24's next steps):
// a plugin that announces itself is told no handler has its type, as
// upstream's kubelet tells a plugin of a type it does not know.
func (n *node) newPluginManager() (*pluginmanager.Manager, error) {
	m, err := pluginmanager.New(pluginmanager.Config{
		Dir: filepath.Join(n.cfg.RootDir, pluginmanager.DirName), Clock: n.clock, Registerer: n.metrics.Registry(),
	})
	if err != nil {
		return nil, fmt.Errorf("create plugin manager: %w", err)
	}
	return m, nil
}
