package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// Snapshot is the manager's state at one moment; it is never changed
// once published.
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

// owner is Run's goroutine: it alone reads and writes these fields.
type owner struct {
	m     *Manager
	w     *watcher
	queue *queue
	// registered are the registered plugins by socket.
	registered map[string]*registered
	// results carries the operations' outcomes; ops counts those running.
	results chan result
	ops     sync.WaitGroup
	// retry fires when the earliest back-off passes (at retryAt).
	retry   clock.Timer
	retryAt time.Time
}

func (o *owner) loop(ctx context.Context) error {
	defer o.stopRetry()
	for {
		o.reconcile(ctx)
		var retryC <-chan time.Time
		if o.retry != nil {
			retryC = o.retry.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-o.w.fs.Events:
			if !ok {
				return errors.New("plugin directory watcher closed")
			}
			o.w.handle(ctx, ev)
		case err, ok := <-o.w.fs.Errors:
			if !ok {
				return errors.New("plugin directory watcher closed")
			}
			klog.FromContext(ctx).Error(err, "Plugin directory watcher failed")
		case r := <-o.results:
			o.finish(ctx, r)
		case <-retryC:
			o.retry, o.retryAt = nil, time.Time{}
		}
	}
}

// reconcile starts the planned operations the queue lets start, publishes
// the state and arms the retry timer.
func (o *owner) reconcile(ctx context.Context) {
	ids := make(map[string]socketID, len(o.registered))
	for s, r := range o.registered {
		ids[s] = r.id
	}
	now := o.m.clock.Now()
	planned := map[string]bool{}
	for _, op := range plan(o.w.desired, ids) {
		planned[op.Socket] = true
		if !o.queue.ready(op.Socket, now) {
			continue
		}
		o.queue.start(op.Socket)
		reg := o.registered[op.Socket]
		o.ops.Add(1)
		go func() {
			defer o.ops.Done()
			r := o.m.run(ctx, op, reg)
			select {
			case o.results <- r:
			case <-ctx.Done():
			}
		}()
	}
	o.queue.prune(planned)
	o.publish()
	o.armRetry(now)
}

// finish records an operation's outcome.
func (o *owner) finish(ctx context.Context, r result) {
	logger := klog.FromContext(ctx).WithValues("socket", r.op.Socket)
	switch {
	case r.op.Kind == opDeregister:
		if p := o.registered[r.op.Socket]; p != nil {
			logger.Info("Plugin deregistered", "type", p.Type, "plugin", p.Name)
		}
		delete(o.registered, r.op.Socket)
	case r.err != nil:
		delay := o.queue.done(r.op.Socket, true, o.m.clock.Now())
		logger.Error(r.err, "Plugin registration failed", "retryIn", delay)
		return
	default:
		logger.Info("Plugin registered", "type", r.plugin.Type, "plugin", r.plugin.Name, "endpoint", r.plugin.Endpoint, "versions", r.plugin.Versions)
		o.registered[r.op.Socket] = r.plugin
	}
	o.queue.done(r.op.Socket, false, o.m.clock.Now())
}

func (o *owner) publish() {
	s := &Snapshot{Desired: slices.Sorted(maps.Keys(o.w.desired))}
	for _, r := range o.registered {
		p := r.Plugin
		p.Versions = slices.Clone(p.Versions)
		s.Registered = append(s.Registered, p)
	}
	slices.SortFunc(s.Registered, func(a, b Plugin) int { return strings.Compare(a.SocketPath, b.SocketPath) })
	o.m.snap.Store(s)
}

// armRetry sets the retry timer to the earliest back-off's end.
func (o *owner) armRetry(now time.Time) {
	at, ok := o.queue.nextRetry(now)
	if ok && at.Equal(o.retryAt) {
		return
	}
	o.stopRetry()
	if ok {
		o.retry, o.retryAt = o.m.clock.NewTimer(at.Sub(now)), at
	}
}

func (o *owner) stopRetry() {
	if o.retry != nil {
		o.retry.Stop()
		o.retry, o.retryAt = nil, time.Time{}
	}
}
