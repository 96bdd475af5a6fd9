package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// group runs named components until the first fails or ctx ends, then
// stops them in the reverse order of their start: each is cancelled and
// waited for before the one started before it, so a component never
// outlives what it was started after (the API servers stop before the sync
// loop, the sync loop before the pod sources and the PLEG).
//
// Stopping is bounded: components that have not returned stopBudget after
// the stop began are cancelled and left behind (the process is about to
// exit), so a stuck component cannot hold berth up; pods are never
// touched either way.
//
// Go is called from one goroutine, before Wait.
type group struct {
	parent     context.Context
	stopBudget time.Duration
	clock      clock.Clock
	comps      []*component
	// failed is closed by the first component that fails.
	failed   chan struct{}
	failOnce sync.Once
	// mu guards first.
	mu    sync.Mutex
	first error
	// skip, when set, names the components Go does not start (a
	// simulated node's host-only ones); set before the first Go.
	skip func(name string) bool
}

// component is one running component: its own context, cancelled only by
// the group, and a channel closed when it has returned.
type component struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

func newGroup(ctx context.Context, stopBudget time.Duration, clk clock.Clock) *group {
	return &group{parent: ctx, stopBudget: stopBudget, clock: clk, failed: make(chan struct{})}
}

// Go starts run in its own goroutine. A component that returns while the
// group is still running is an error: it stops berth.
func (g *group) Go(name string, run func(ctx context.Context) error) {
	if g.skip != nil && g.skip(name) {
		return
	}
	// Not cancelled with the parent: Wait cancels components one by one.
	ctx, cancel := context.WithCancel(context.WithoutCancel(g.parent))
	c := &component{name: name, cancel: cancel, done: make(chan struct{})}
	g.comps = append(g.comps, c)
	go func() {
		defer close(c.done)
		err := run(ctx)
		if ctx.Err() != nil {
			if err != nil {
				klog.FromContext(ctx).Error(err, "Component stopped with an error", "component", name)
			}
			return
		}
		if err == nil {
			err = fmt.Errorf("component %s stopped unexpectedly", name)
		}
		g.mu.Lock()
		if g.first == nil {
			g.first = fmt.Errorf("%s: %w", name, err)
		}
		g.mu.Unlock()
		g.failOnce.Do(func() { close(g.failed) })
	}()
}

// Wait blocks until ctx ends or a component fails, stops every component
// in reverse order, and reports the first failure (nil when ctx ended).
func (g *group) Wait() error {
	select {
	case <-g.parent.Done():
	case <-g.failed:
	}
	logger := klog.FromContext(g.parent)
	budget := g.clock.After(g.stopBudget)
	for i := len(g.comps) - 1; i >= 0; i-- {
		c := g.comps[i]
		c.cancel()
		select {
		case <-c.done:
			logger.V(2).Info("Component stopped", "component", c.name)
		case <-budget:
			var left []string
			for _, rest := range g.comps[:i+1] {
				rest.cancel()
				left = append(left, rest.name)
			}
			logger.Error(nil, "Components did not stop in time; leaving them behind", "budget", g.stopBudget, "components", left)
			i = 0
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.first
}
