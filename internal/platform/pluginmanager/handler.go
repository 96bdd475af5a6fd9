package pluginmanager

import (
	"context"
	"time"
)

// Handler is what a kind of plugin (CSI drivers, DRA drivers, device
// plugins) is registered with: upstream's cache.PluginHandler. The
// manager calls it for the plugins whose GetInfo names its type in Config
// Handlers.
//
// The manager calls one plugin's methods one at a time, but different
// plugins' concurrently: a Handler must be safe for concurrent use.
type Handler interface {
	// ValidatePlugin says whether the plugin may register: an error
	// refuses it, and the plugin is told why.
	ValidatePlugin(ctx context.Context, pluginName, endpoint string, versions []string) error
	// RegisterPlugin registers a validated plugin, which serves at
	// endpoint. timeout is the plugin client's call timeout (nil: the
	// handler's own default; the manager passes nil, as upstream).
	RegisterPlugin(ctx context.Context, pluginName, endpoint string, versions []string, timeout *time.Duration) error
	// DeRegisterPlugin forgets a registered plugin whose socket is gone
	// (or was re-created, and is registered again next).
	DeRegisterPlugin(ctx context.Context, pluginName, endpoint string)
}
