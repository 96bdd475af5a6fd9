package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// DefaultLogindConfDir is where upstream writes its logind drop-in.
	DefaultLogindConfDir = "/etc/systemd/logind.conf.d"
	// logindConfFile is upstream's drop-in name, so berth replaces a
	// kubelet's override rather than adding a second one.
	logindConfFile = "99-kubelet.conf"
	// reconnectPeriod is how long berth waits before it connects to logind
	// again after a failure, as upstream's dbusReconnectPeriod; it doubles
	// while connections fail before taking the lock (no system bus, no
	// logind), up to maxReconnectPeriod.
	reconnectPeriod    = time.Second
	maxReconnectPeriod = 5 * time.Minute
	// finishedPoll is how often a group's pods are checked while they end.
	finishedPoll = 100 * time.Millisecond
	// delayChecks and delayFirstWait bound the wait for logind to take a
	// raised InhibitDelayMaxSec (upstream: 5 tries from 100ms, doubling).
	delayChecks    = 5
	delayFirstWait = 100 * time.Millisecond
)

// Config is what New needs.
type Config struct {
	// Periods are the budgets (Periods); nil is an error: with graceful
	// node shutdown off there is no Manager.
	Periods []Period
	// Connect opens the bus logind is on. Nil: ConnectSystemBus.
	Connect func(ctx context.Context) (*Logind, error)
	// LogindConfDir is where the InhibitDelayMaxSec drop-in is written
	// when logind allows less than the budget. Empty: DefaultLogindConfDir.
	LogindConfDir string
	// Pods returns the pods that still run on the node (admitted and not
	// terminal).
	Pods func() []*corev1.Pod
	// Kill asks the pod's worker to end it within gracePeriodSeconds with
	// this package's Reason and Message; it returns at once.
	Kill func(ctx context.Context, pod *corev1.Pod, gracePeriodSeconds int64)
	// Finished reports whether the pod has ended on this node (containers
	// stopped, volumes released).
	Finished func(uid types.UID) bool
	// Changed is told when the node starts or stops shutting down (node
	// status reads ShuttingDown). Must not block.
	Changed func()
	// Event records a Node event.
	Event func(eventType, reason, message string)
	Clock clock.WithTicker
}

// Manager holds logind's inhibitor lock and ends the node's pods when a
// shutdown begins. Run is its one goroutine; ShuttingDown may be called
// from any goroutine.
type Manager struct {
	cfg          Config
	shuttingDown atomic.Bool
}

// New validates cfg and returns an idle Manager.
func New(cfg Config) (*Manager, error) {
	if len(cfg.Periods) == 0 || cfg.Pods == nil || cfg.Kill == nil || cfg.Finished == nil || cfg.Clock == nil {
		return nil, errors.New("nodeshutdown: Periods, Pods, Kill, Finished and Clock are required")
	}
	if cfg.Connect == nil {
		cfg.Connect = ConnectSystemBus
	}
	if cfg.LogindConfDir == "" {
		cfg.LogindConfDir = DefaultLogindConfDir
	}
	if cfg.Changed == nil {
		cfg.Changed = func() {}
	}
	if cfg.Event == nil {
		cfg.Event = func(string, string, string) {}
	}
	return &Manager{cfg: cfg}, nil
}

// ShuttingDown reports whether logind announced a shutdown that was not
// cancelled: the node is NotReady and admits no pod.
func (m *Manager) ShuttingDown() bool { return m.shuttingDown.Load() }

// Run holds the inhibitor lock and handles logind's signals until ctx
// ends, connecting again after a failure (logind restarted, bus gone).
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting graceful node shutdown manager", "periods", m.cfg.Periods, "requested", Requested(m.cfg.Periods))
	wait := reconnectPeriod
	for {
		locked, err := m.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if locked {
			wait = reconnectPeriod
		}
		logger.Error(err, "Unable to watch the node for shutdown events; retrying", "after", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-m.cfg.Clock.After(wait):
		}
		wait = min(2*wait, maxReconnectPeriod)
	}
}

// session is one connection to logind: make sure its delay allows the
// budget, watch PrepareForShutdown, take the lock, and handle signals. It
// says whether it got as far as taking the lock.
func (m *Manager) session(ctx context.Context) (bool, error) {
	l, err := m.cfg.Connect(ctx)
	if err != nil {
		return false, err
	}
	defer l.Close()
	if err := m.ensureDelay(ctx, l); err != nil {
		return false, err
	}
	// Watch first, so no signal falls between the lock and the watch.
	events, err := l.WatchShutdown(ctx)
	if err != nil {
		return false, err
	}
	lock, err := l.InhibitShutdown(ctx)
	if err != nil {
		return false, err
	}
	defer func() { release(ctx, lock) }()
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case active, ok := <-events:
			if !ok {
				return true, errors.New("logind connection closed")
			}
			if lock, err = m.handle(ctx, l, active, lock); err != nil {
				return true, err
			}
		}
	}
}

// handle acts on one PrepareForShutdown value and returns the lock berth
// holds afterwards (nil once released for a shutdown).
func (m *Manager) handle(ctx context.Context, l *Logind, active bool, lock *os.File) (*os.File, error) {
	logger := klog.FromContext(ctx)
	if !active {
		logger.Info("Node shutdown cancelled")
		m.cfg.Event(corev1.EventTypeNormal, "NodeShutdown", "Shutdown manager detected shutdown cancellation")
		m.shuttingDown.Store(false)
		m.cfg.Changed()
		if lock != nil {
			return lock, nil
		}
		return l.InhibitShutdown(ctx)
	}
	logger.Info("Node shutdown detected: ending pods", "requested", Requested(m.cfg.Periods))
	m.cfg.Event(corev1.EventTypeNormal, "NodeShutdown", "Shutdown manager detected shutdown event")
	m.shuttingDown.Store(true)
	m.cfg.Changed()
	m.endPods(ctx)
	release(ctx, lock)
	logger.Info("Node shutdown: pods ended, inhibitor lock released; the node will shut down shortly")
	return nil, nil
}

// release closes the inhibitor lock (nil: none held).
func release(ctx context.Context, lock *os.File) {
	if lock == nil {
		return
	}
	if err := lock.Close(); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to release the logind inhibitor lock")
	}
}

// endPods ends the node's pods group by group, lowest priority first;
// each group gets its grace period before the next starts.
func (m *Manager) endPods(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for _, g := range Plan(m.cfg.Periods, m.cfg.Pods()) {
		if ctx.Err() != nil {
			return
		}
		if len(g.Pods) == 0 {
			continue
		}
		for _, k := range g.Pods {
			logger.V(1).Info("Shutdown manager ending pod", "pod", klog.KObj(k.Pod), "gracePeriod", k.GracePeriodSeconds)
			m.cfg.Kill(ctx, k.Pod, k.GracePeriodSeconds)
		}
		if m.waitGroup(ctx, g) {
			logger.V(1).Info("Done waiting for the pods of a group to end", "priority", g.Priority, "gracePeriod", g.GracePeriodSeconds)
		} else {
			logger.Info("Pods of a group did not end within its grace period; going on", "priority", g.Priority, "gracePeriod", g.GracePeriodSeconds)
		}
	}
}

// waitGroup waits until every pod of g finished, or g's grace period is
// over (false), or ctx ends (false).
func (m *Manager) waitGroup(ctx context.Context, g Group) bool {
	budget := m.cfg.Clock.NewTimer(time.Duration(g.GracePeriodSeconds) * time.Second)
	defer budget.Stop()
	poll := m.cfg.Clock.NewTicker(finishedPoll)
	defer poll.Stop()
	for !m.allFinished(g) {
		select {
		case <-ctx.Done():
			return false
		case <-budget.C():
			return false
		case <-poll.C():
		}
	}
	return true
}

func (m *Manager) allFinished(g Group) bool {
	for _, k := range g.Pods {
		if !m.cfg.Finished(k.Pod.UID) {
			return false
		}
	}
	return true
}

// ensureDelay makes sure logind lets the lock hold a shutdown back for the
// whole budget: when InhibitDelayMaxSec is smaller, it writes upstream's
// drop-in with the budget, has logind reload, and checks again (the way
// upstream does; it fails when logind still allows less).
func (m *Manager) ensureDelay(ctx context.Context, l *Logind) error {
	want := Requested(m.cfg.Periods)
	got, err := l.InhibitDelayMax(ctx)
	if err != nil || want <= got {
		return err
	}
	klog.FromContext(ctx).Info("Raising logind InhibitDelayMaxSec to the shutdown grace period", "current", got, "requested", want)
	if err := writeDelayOverride(m.cfg.LogindConfDir, want); err != nil {
		return err
	}
	if err := l.ReloadConfig(ctx); err != nil {
		return err
	}
	wait := delayFirstWait
	for range delayChecks {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.cfg.Clock.After(wait):
		}
		if got, err = l.InhibitDelayMax(ctx); err != nil {
			return err
		}
		if want <= got {
			return nil
		}
		wait *= 2
	}
	return fmt.Errorf("logind InhibitDelayMaxSec is %v after %d checks, less than the %v the shutdown grace periods need", got, delayChecks, want)
}

// writeDelayOverride writes upstream's logind drop-in.
func writeDelayOverride(dir string, d time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create logind configuration directory %q: %w", dir, err)
	}
	content := fmt.Sprintf("# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=%.0f\n", d.Seconds())
	path := filepath.Join(dir, logindConfFile)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("write logind drop-in %q: %w", path, err)
	}
	return nil
}
