package iptables

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	utilexec "k8s.io/utils/exec"
)

// Upstream's timings: the canary is looked at every minute (the kubelet's
// Monitor call); once it is gone, the other tables' canaries are waited
// for every 100ms for 5s (iptablesFlushPollTime, iptablesFlushTimeout).
const (
	DefaultInterval = time.Minute
	flushPoll       = 100 * time.Millisecond
	flushTimeout    = 5 * time.Second
)

// tables is what the Manager needs of one family's iptables (*Runner).
type tables interface {
	Family() Family
	Present(ctx context.Context) error
	EnsureChain(ctx context.Context, table, chain string) error
	ChainExists(ctx context.Context, table, chain string) (bool, error)
	Apply(ctx context.Context, steps []Step) error
}

var _ tables = (*Runner)(nil)

// Config is what New needs.
type Config struct {
	// Exec runs the binaries; nil means the host's.
	Exec  utilexec.Interface
	Clock clock.WithTicker
	// Interval is how often the canary is checked; zero means
	// DefaultInterval.
	Interval time.Duration
}

// Manager keeps the utility chains of every IP family iptables is present
// for. Run is its only entry point.
type Manager struct {
	clock    clock.WithTicker
	interval time.Duration
	families []tables
}

// New returns a Manager for IPv4 and IPv6; it starts nothing.
func New(cfg Config) (*Manager, error) {
	if cfg.Clock == nil {
		return nil, errors.New("create iptables manager: Clock is required")
	}
	if cfg.Exec == nil {
		cfg.Exec = utilexec.New()
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	return &Manager{clock: cfg.Clock, interval: cfg.Interval,
		families: []tables{NewRunner(cfg.Exec, IPv4), NewRunner(cfg.Exec, IPv6)}}, nil
}

// Run makes the chains of every family whose iptables is present, as
// upstream's initNetworkUtil, then remakes them whenever the canary
// disappears, until ctx ends. A host without iptables (nftables only) is
// no error: nothing is made. Like upstream's kubelet, berth leaves the
// chains in place when it stops.
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	var wg sync.WaitGroup
	present := 0
	for _, t := range m.families {
		if t.Present(ctx) != nil {
			continue
		}
		present++
		if !m.sync(ctx, t) {
			logger.Info("Failed to initialize iptables rules; some functionality may be missing.", "protocol", t.Family())
			continue
		}
		logger.Info("Initialized iptables rules.", "protocol", t.Family())
		wg.Go(func() { m.monitor(ctx, t) })
	}
	if present == 0 {
		logger.Info("No iptables support on this system; not creating the KUBE-IPTABLES-HINT chain")
	}
	wg.Wait()
	<-ctx.Done()
	return nil
}

// sync makes the family's chains and rules; a failure is logged.
func (m *Manager) sync(ctx context.Context, t tables) bool {
	if err := t.Apply(ctx, UtilChains(t.Family())); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to ensure iptables rules", "protocol", t.Family())
		return false
	}
	return true
}

// monitor is upstream's Monitor with the kubelet's arguments: make the
// canaries, wait until the first is gone (the tables were flushed),
// give the others up to flushTimeout to go too, sync again; until ctx
// ends.
func (m *Manager) monitor(ctx context.Context, t tables) {
	logger := klog.FromContext(ctx).WithValues("protocol", t.Family())
	canaries := CanaryTables()
	for {
		made := m.poll(ctx, m.interval, true, func() bool {
			for _, table := range canaries {
				if err := t.EnsureChain(ctx, table, CanaryChain); err != nil {
					logger.Error(err, "Could not set up iptables canary", "table", table, "chain", CanaryChain)
					return false
				}
			}
			return true
		})
		gone := made && m.poll(ctx, m.interval, false, func() bool {
			exists, err := t.ChainExists(ctx, canaries[0], CanaryChain)
			if exists {
				return false
			}
			if IsResourceError(err) {
				logger.Error(err, "Could not check for iptables canary", "table", canaries[0], "chain", CanaryChain)
				return false
			}
			logger.V(2).Info("IPTables canary deleted", "table", canaries[0], "chain", CanaryChain)
			if !m.othersGone(ctx, t, canaries[1:]) {
				logger.Info("Inconsistent iptables state detected")
			}
			return true
		})
		if !gone {
			return // ctx ended
		}
		logger.V(2).Info("Reloading after iptables flush")
		m.sync(ctx, t)
	}
}

// othersGone waits up to flushTimeout for the canaries of tables to be
// gone too.
func (m *Manager) othersGone(ctx context.Context, t tables, tables []string) bool {
	deadline := m.clock.Now().Add(flushTimeout)
	for {
		all := true
		for _, table := range tables {
			if exists, err := t.ChainExists(ctx, table, CanaryChain); exists || IsResourceError(err) {
				all = false
			}
		}
		if all {
			return true
		}
		if !m.clock.Now().Before(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-m.clock.After(flushPoll):
		}
	}
}

// poll calls cond every period (at once too when immediate) until it is
// true, and says whether it was before ctx ended.
func (m *Manager) poll(ctx context.Context, period time.Duration, immediate bool, cond func() bool) bool {
	if immediate && cond() {
		return true
	}
	t := m.clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			if cond() {
				return true
			}
		}
	}
}
