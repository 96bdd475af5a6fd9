package dra

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/stats"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
)

// WipeDelay is how long a driver may stay away (no connection to it up)
// before its ResourceSlices of the node are deleted,
// upstream's defaultWipingDelay.
const WipeDelay = 30 * time.Second

// Drivers is the plugin manager's handler of DRA drivers (plugin type
// registerapi.DRAPlugin), upstream's DRAPluginManager: it validates a
// driver's services, keeps a connection per registered endpoint (the
// newest one that is up is used), and has the ResourceSlices of a driver
// that stays away (no connection up: deregistered, or its connections
// down) WipeDelay deleted (wipe.go, watch.go).
//
// Safe for concurrent use: mu guards plugins and away.
type Drivers struct {
	clock clock.Clock
	delay time.Duration
	// due receives the drivers whose WipeDelay ran out; Run reads it.
	due chan string
	// done is closed when Run ends, so that a timer does not block.
	done chan struct{}
	// watch follows a plugin's health stream until its context ends
	// (Manager.watchHealth); nil opens none (ResourceHealthStatus off).
	// Set before the handler is used.
	watch func(ctx context.Context, p *plugin)
	// streams are the running watch goroutines.
	streams sync.WaitGroup

	mu sync.Mutex
	// plugins are the registered endpoints per driver, oldest first.
	plugins map[string][]*plugin
	// away are the timers of the drivers without a plugin.
	away map[string]*awayTimer
}

// awayTimer is a driver's wipe timer; closing stop ends its goroutine.
type awayTimer struct {
	timer clock.Timer
	stop  chan struct{}
}

func (a *awayTimer) cancel() {
	a.timer.Stop()
	close(a.stop)
}

var _ pluginmanager.Handler = (*Drivers)(nil)

func newDrivers(clk clock.Clock, delay time.Duration) *Drivers {
	return &Drivers{clock: clk, delay: delay, due: make(chan string, 16), done: make(chan struct{}),
		plugins: map[string][]*plugin{}, away: map[string]*awayTimer{}}
}

// ValidatePlugin accepts a driver that offers a DRAPlugin service berth
// speaks.
func (d *Drivers) ValidatePlugin(_ context.Context, name, endpoint string, versions []string) error {
	if _, err := chooseService(versions); err != nil {
		return fmt.Errorf("invalid supported gRPC versions of DRA driver plugin %s at endpoint %s: %w", name, endpoint, err)
	}
	return nil
}

// RegisterPlugin connects to the driver's endpoint with the newest
// service it offers and makes it the one the driver's calls go to; once
// the connection is up, a wipe of the driver's slices that was due is
// called off.
func (d *Drivers) RegisterPlugin(ctx context.Context, name, endpoint string, versions []string, timeout *time.Duration) error {
	service, err := chooseService(versions)
	if err != nil {
		return fmt.Errorf("invalid supported gRPC versions of DRA driver plugin %s at endpoint %s: %w", name, endpoint, err)
	}
	t := callTimeout
	if timeout != nil {
		t = *timeout
	}
	p, err := d.add(ctx, name, endpoint, service, chooseHealthService(versions), t)
	if err != nil {
		return err
	}
	// Outside mu: connWatch takes it.
	p.conn.Connect()
	return nil
}

// add makes the endpoint's connection, not started yet, the driver's
// newest, and starts the watch of its health stream when it offers one
// (upstream's add: one stream per endpoint, which lasts until the
// endpoint is deregistered, not bounded by the registration's ctx).
func (d *Drivers) add(ctx context.Context, name, endpoint, service, health string, timeout time.Duration) (*plugin, error) {
	log := klog.FromContext(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.ContainsFunc(d.plugins[name], func(p *plugin) bool { return p.endpoint == endpoint }) {
		return nil, fmt.Errorf("endpoint %s already registered for DRA driver plugin %s", endpoint, name)
	}
	p, err := dialPlugin(name, endpoint, service, health, timeout, func(p *plugin) stats.Handler { return &connWatch{d: d, p: p} })
	if err != nil {
		return nil, err
	}
	if d.watch != nil && health != "" {
		streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		p.stopHealth = cancel
		d.streams.Go(func() { d.watch(streamCtx, p) })
	}
	d.plugins[name] = append(d.plugins[name], p)
	log.Info("Registered DRA driver", "driver", name, "endpoint", endpoint, "service", service, "healthService", health, "plugins", len(d.plugins[name]))
	d.syncLocked(log, name)
	return p, nil
}

// DeRegisterPlugin closes the endpoint's connection; when no other
// connection of the driver is up, its slices are wiped after WipeDelay
// unless it comes back.
func (d *Drivers) DeRegisterPlugin(ctx context.Context, name, endpoint string) {
	log := klog.FromContext(ctx)
	gone := d.remove(log, name, endpoint)
	if gone == nil {
		return
	}
	// Its health stream ends, which drops the driver's device health
	// (upstream's remove cancels the stream; its handler clears the
	// driver as the stream exits).
	gone.endHealth()
	// Outside mu: closing tells connWatch, which takes it.
	if err := gone.close(); err != nil {
		log.Error(err, "Failed to close the connection to a DRA driver", "driver", name, "endpoint", endpoint)
	}
}

// remove takes the endpoint out of the driver's plugins and returns it
// (nil when it was not registered).
func (d *Drivers) remove(log klog.Logger, name, endpoint string) *plugin {
	d.mu.Lock()
	defer d.mu.Unlock()
	ps := d.plugins[name]
	i := slices.IndexFunc(ps, func(p *plugin) bool { return p.endpoint == endpoint })
	if i < 0 {
		return nil
	}
	gone := ps[i]
	if len(ps) == 1 {
		delete(d.plugins, name)
	} else {
		d.plugins[name] = slices.Delete(ps, i, i+1)
	}
	log.Info("Deregistered DRA driver", "driver", name, "endpoint", endpoint, "plugins", len(d.plugins[name]))
	d.syncLocked(log, name)
	return gone
}

// setConnected records a plugin's connection state (connWatch) and
// starts or stops its driver's away timer; a plugin no longer registered
// is ignored.
func (d *Drivers) setConnected(log klog.Logger, p *plugin, up bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.plugins[p.driver], p) {
		return
	}
	log.V(2).Info("DRA driver connection changed", "driver", p.driver, "endpoint", p.endpoint, "connected", up)
	p.connected = up
	d.syncLocked(log, p.driver)
}

// usableLocked says whether a connection of the driver is up. d.mu is
// held.
func (d *Drivers) usableLocked(name string) bool {
	return slices.ContainsFunc(d.plugins[name], func(p *plugin) bool { return p.connected })
}

// syncLocked starts the driver's away timer when none of its connections
// is up and stops it when one is (upstream's sync). d.mu is held.
func (d *Drivers) syncLocked(log klog.Logger, name string) {
	a, waiting := d.away[name]
	if d.usableLocked(name) {
		if waiting {
			a.cancel()
			delete(d.away, name)
		}
		return
	}
	if waiting {
		return
	}
	log.V(2).Info("DRA driver is away, its ResourceSlices are wiped unless it returns", "driver", name, "delay", d.delay)
	a = &awayTimer{timer: d.clock.NewTimer(d.delay), stop: make(chan struct{})}
	d.away[name] = a
	go func() {
		select {
		case <-a.timer.C():
		case <-a.stop:
			return
		case <-d.done:
			return
		}
		select {
		case d.due <- name:
		case <-a.stop:
		case <-d.done:
		}
	}()
}

// stillAway says whether the driver is still without a plugin as its
// timer fires, and forgets the timer.
func (d *Drivers) stillAway(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.away[name]; !ok || d.usableLocked(name) {
		return false
	}
	delete(d.away, name)
	return true
}

// plugin returns the driver's newest endpoint whose connection is up,
// else its newest (upstream's get).
func (d *Drivers) plugin(name string) (*plugin, error) {
	if name == "" {
		return nil, fmt.Errorf("DRA driver name is empty")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ps := d.plugins[name]
	if len(ps) == 0 {
		return nil, fmt.Errorf("DRA driver %s is not registered", name)
	}
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].connected {
			return ps[i], nil
		}
	}
	return ps[len(ps)-1], nil
}

// Registered lists the registered drivers and their services
// ("driver=service"), sorted, for tests and logs.
func (d *Drivers) Registered() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for name, ps := range d.plugins {
		for _, p := range ps {
			out = append(out, name+"="+p.service+"@"+p.endpoint)
		}
	}
	slices.Sort(out)
	return out
}

// close closes every connection and stops the timers (at the end of Run).
func (d *Drivers) close() {
	d.mu.Lock()
	for _, a := range d.away {
		a.cancel()
	}
	all := d.plugins
	d.away, d.plugins = map[string]*awayTimer{}, map[string][]*plugin{}
	d.mu.Unlock()
	for _, ps := range all {
		for _, p := range ps {
			p.endHealth()
			_ = p.close()
		}
	}
	d.streams.Wait()
}

// connected says whether a connection of the driver is up (tests).
func (d *Drivers) connected(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.usableLocked(name)
}

// String is for logs.
func (d *Drivers) String() string { return strings.Join(d.Registered(), ",") }
