package agent

import (
	"fmt"
	"path/filepath"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
)

// newPluginManager builds the plugin manager over
// <root-dir>/plugins_registry, with upstream's metric in berth's registry,
// the handler of CSI drivers in cluster mode and that of DRA drivers
// (the DRA manager's). A plugin of a type without a handler (CSI
// standalone) is told no handler has its type, as upstream's kubelet
// tells a plugin of a type it does not know.
func (n *node) newPluginManager() (*pluginmanager.Manager, error) {
	handlers := map[string]pluginmanager.Handler{registerapi.DRAPlugin: n.managers.dra.Drivers()}
	if n.vols.csi != nil {
		handlers[registerapi.CSIPlugin] = n.vols.csi
	}
	m, err := pluginmanager.New(pluginmanager.Config{
		Dir: filepath.Join(n.cfg.RootDir, pluginmanager.DirName), Clock: n.clock, Registerer: n.metrics.Registry(), Handlers: handlers,
	})
	if err != nil {
		return nil, fmt.Errorf("create plugin manager: %w", err)
	}
	return m, nil
}
