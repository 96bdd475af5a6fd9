package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// minWatchdogTimeout is the shortest WATCHDOG_USEC accepted, as upstream's
// minimalNotifyInterval: half of it must leave room for a health check.
const minWatchdogTimeout = time.Second

// Config is what New needs.
type Config struct {
	// Notify sends one sd_notify state and reports whether it was sent
	// (false, nil: no NOTIFY_SOCKET). Nil: daemon.SdNotify.
	Notify func(state string) (bool, error)
	// WatchdogTimeout is systemd's watchdog timeout (WATCHDOG_USEC), 0 when
	// the watchdog is off (WatchdogFromEnv reads it).
	WatchdogTimeout time.Duration
	// Health is berth's own health check (the healthz verdict); the
	// watchdog is pinged only while it returns nil. Required with a
	// watchdog.
	Health func() error
	Clock  clock.WithTicker
}

// WatchdogFromEnv reads systemd's watchdog timeout from WATCHDOG_USEC (and
// WATCHDOG_PID), 0 when the watchdog is off for this process.
func WatchdogFromEnv() (time.Duration, error) {
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return 0, fmt.Errorf("read systemd watchdog settings: %w", err)
	}
	return d, nil
}

// Notifier sends berth's state to systemd. Ready and Run may be called
// from different goroutines; it holds no mutable state.
type Notifier struct {
	cfg Config
}

// New validates cfg and returns a Notifier.
func New(cfg Config) (*Notifier, error) {
	if cfg.Notify == nil {
		cfg.Notify = func(state string) (bool, error) { return daemon.SdNotify(false, state) }
	}
	if cfg.Clock == nil {
		return nil, errors.New("sdnotify: Clock is required")
	}
	if cfg.WatchdogTimeout > 0 {
		if cfg.WatchdogTimeout <= minWatchdogTimeout {
			return nil, fmt.Errorf("configure systemd watchdog: timeout %s is too small (must be over %s)", cfg.WatchdogTimeout, minWatchdogTimeout)
		}
		if cfg.Health == nil {
			return nil, errors.New("sdnotify: Health is required with a watchdog")
		}
	}
	return &Notifier{cfg: cfg}, nil
}

// Ready tells systemd that berth has started (READY=1).
func (n *Notifier) Ready(ctx context.Context) {
	logger := klog.FromContext(ctx)
	sent, err := n.cfg.Notify(daemon.SdNotifyReady)
	switch {
	case err != nil:
		logger.Error(err, "Failed to notify systemd that berth is ready")
	case sent:
		logger.Info("Notified systemd that berth is ready")
	default:
		logger.V(2).Info("Not started by systemd with a notify socket; no readiness sent")
	}
}

// Run pings systemd's watchdog every half of its timeout while the health
// check passes, until ctx ends. A failing check skips the ping, so systemd
// restarts a berth that stays unhealthy for the whole timeout.
func (n *Notifier) Run(ctx context.Context) error {
	if n.cfg.WatchdogTimeout == 0 {
		<-ctx.Done()
		return nil
	}
	logger := klog.FromContext(ctx)
	interval := n.cfg.WatchdogTimeout / 2
	logger.Info("Starting systemd watchdog pings", "interval", interval)
	t := n.cfg.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		n.ping(logger)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// ping sends WATCHDOG=1 if berth is healthy.
func (n *Notifier) ping(logger klog.Logger) {
	if err := n.cfg.Health(); err != nil {
		logger.Error(err, "Not pinging the systemd watchdog: berth is not healthy")
		return
	}
	sent, err := n.cfg.Notify(daemon.SdNotifyWatchdog)
	switch {
	case err != nil:
		logger.Error(err, "Failed to ping the systemd watchdog")
	case !sent:
		logger.Error(nil, "Failed to ping the systemd watchdog: NOTIFY_SOCKET is not set")
	default:
		logger.V(5).Info("Pinged the systemd watchdog")
	}
}
