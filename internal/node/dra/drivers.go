package dra

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
)

// WipeDelay is how long a driver may stay away (no plugin of it
// registered) before its ResourceSlices of the node are deleted,
// upstream's defaultWipingDelay.
const WipeDelay = 30 * time.Second

// Drivers is the plugin manager's handler of DRA drivers (plugin type
// registerapi.DRAPlugin), upstream's DRAPluginManager: it validates a
// driver's services, keeps a connection per registered endpoint (the
// newest one is used), and has the ResourceSlices of a driver that stays
// away WipeDelay deleted (wipe.go).
//
// Safe for concurrent use: mu guards plugins and away.
type Drivers struct {
	clock clock.Clock
	delay time.Duration
	// due receives the drivers whose WipeDelay ran out; Run reads it.
	due chan string
	// done is closed when Run ends, so that a timer does not block.
	done chan struct{}

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
// service it offers and makes it the one the driver's calls go to; a
// wipe of the driver's slices that was due is called off.
func (d *Drivers) RegisterPlugin(ctx context.Context, name, endpoint string, versions []string, timeout *time.Duration) error {
	service, err := chooseService(versions)
	if err != nil {
		return fmt.Errorf("invalid supported gRPC versions of DRA driver plugin %s at endpoint %s: %w", name, endpoint, err)
	}
	t := callTimeout
	if timeout != nil {
		t = *timeout
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.ContainsFunc(d.plugins[name], func(p *plugin) bool { return p.endpoint == endpoint }) {
		return fmt.Errorf("endpoint %s already registered for DRA driver plugin %s", endpoint, name)
	}
	p, err := dialPlugin(name, endpoint, service, t)
	if err != nil {
		return err
	}
	d.plugins[name] = append(d.plugins[name], p)
	klog.FromContext(ctx).Info("Registered DRA driver", "driver", name, "endpoint", endpoint, "service", service, "plugins", len(d.plugins[name]))
	d.syncLocked(ctx, name)
	return nil
}

// DeRegisterPlugin closes the endpoint's connection; when it was the
// driver's last, its slices are wiped after WipeDelay unless it comes
// back.
func (d *Drivers) DeRegisterPlugin(ctx context.Context, name, endpoint string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ps := d.plugins[name]
	i := slices.IndexFunc(ps, func(p *plugin) bool { return p.endpoint == endpoint })
	if i < 0 {
		return
	}
	if err := ps[i].close(); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to close the connection to a DRA driver", "driver", name, "endpoint", endpoint)
	}
	if len(ps) == 1 {
		delete(d.plugins, name)
	} else {
		d.plugins[name] = slices.Delete(ps, i, i+1)
	}
	klog.FromContext(ctx).Info("Deregistered DRA driver", "driver", name, "endpoint", endpoint, "plugins", len(d.plugins[name]))
	d.syncLocked(ctx, name)
}

// syncLocked starts the driver's away timer when it has no plugin and
// stops it when it has one. d.mu is held.
func (d *Drivers) syncLocked(ctx context.Context, name string) {
	a, waiting := d.away[name]
	if len(d.plugins[name]) > 0 {
		if waiting {
			a.cancel()
			delete(d.away, name)
		}
		return
	}
	if waiting {
		return
	}
	klog.FromContext(ctx).V(2).Info("DRA driver is away, its ResourceSlices are wiped unless it returns", "driver", name, "delay", d.delay)
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
	if _, ok := d.away[name]; !ok || len(d.plugins[name]) > 0 {
		return false
	}
	delete(d.away, name)
	return true
}

// plugin returns the driver's newest registered endpoint.
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
	defer d.mu.Unlock()
	for _, a := range d.away {
		a.cancel()
	}
	for _, ps := range d.plugins {
		for _, p := range ps {
			_ = p.close()
		}
	}
	d.away, d.plugins = map[string]*awayTimer{}, map[string][]*plugin{}
}

// String is for logs.
func (d *Drivers) String() string { return strings.Join(d.Registered(), ",") }
