package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DirName is the directory below the root directory where plugins put
// their registration sockets, as upstream's kubelet
// (DefaultKubeletPluginsRegistrationDirName).
const DirName = "plugins_registry"

// Config is what a Manager is built from.
type Config struct {
	// Dir is the directory watched for plugin sockets, an absolute path
	// (<root-dir>/plugins_registry). Run creates it (0750) when missing.
	Dir string
	// Clock times the retries' back-off. Required.
	Clock clock.Clock
	// Handlers are the handlers by plugin type (registerapi.CSIPlugin,
	// DRAPlugin, DevicePlugin). A plugin of a type without one is refused
	// with upstream's "no handler registered" status.
	Handlers map[string]Handler
	// Registerer, if set, gets the plugin_manager_total_plugins gauge.
	Registerer prometheus.Registerer
}

// Plugin is a registered plugin.
type Plugin struct {
	// SocketPath is the registration socket it was found at.
	SocketPath string
	// Type, Name and Versions are what its GetInfo said.
	Type, Name string
	Versions   []string
	// Endpoint is where it serves: its GetInfo's, else SocketPath.
	Endpoint string
}

// Snapshot is the manager's state at one moment. It is never changed once
// published, and its readers share it: they must not change it either.
type Snapshot struct {
	// Desired are the sockets in the directory, sorted.
	Desired []string
	// Registered are the registered plugins, by socket.
	Registered []Plugin
}

// Manager registers the plugins whose sockets appear in its directory
// with the handlers of their types, and deregisters them when their
// sockets go (upstream's plugin manager). Run's goroutine owns its state;
// Snapshot is safe for concurrent use.
type Manager struct {
	dir      string
	clock    clock.Clock
	handlers map[string]Handler
	// snap is the state Run publishes after every change.
	snap atomic.Pointer[Snapshot]
}

// New builds a Manager; it starts nothing.
func New(cfg Config) (*Manager, error) {
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("plugin directory %q is not an absolute path", cfg.Dir)
	}
	if cfg.Clock == nil {
		return nil, errors.New("plugin manager needs a clock")
	}
	for t, h := range cfg.Handlers {
		if h == nil {
			return nil, fmt.Errorf("plugin type %q has a nil handler", t)
		}
	}
	m := &Manager{dir: filepath.Clean(cfg.Dir), clock: cfg.Clock, handlers: maps.Clone(cfg.Handlers)}
	m.snap.Store(&Snapshot{})
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(collector{m}); err != nil {
			return nil, fmt.Errorf("register plugin manager metrics: %w", err)
		}
	}
	return m, nil
}

// Snapshot returns the latest published state.
func (m *Manager) Snapshot() Snapshot { return *m.snap.Load() }

// Run creates the directory, walks and watches it, and registers and
// deregisters plugins until ctx ends; then it waits for the operations in
// flight (their context ends with ctx) and returns nil. Plugins stay
// registered with their handlers when Run returns, as upstream's.
func (m *Manager) Run(ctx context.Context) error {
	if err := os.MkdirAll(m.dir, 0o750); err != nil {
		return fmt.Errorf("create plugin directory %q: %w", m.dir, err)
	}
	w, err := watch(ctx, m.dir)
	if err != nil {
		return err
	}
	defer w.close()
	klog.FromContext(ctx).Info("Plugin manager started", "dir", m.dir)
	o := &owner{m: m, w: w, queue: newQueue(), registered: map[string]*registered{}, results: make(chan result)}
	defer o.ops.Wait()
	return o.loop(ctx)
}
