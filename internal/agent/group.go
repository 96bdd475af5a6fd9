package agent

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/klog/v2"
)

// group runs named components until the first fails or ctx ends, then
// cancels the rest and waits for them. Components are started in the order
// they are added; cancellation reaches them all at once.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards first.
	mu    sync.Mutex
	first error
}

func newGroup(ctx context.Context) *group {
	ctx, cancel := context.WithCancel(ctx)
	return &group{ctx: ctx, cancel: cancel}
}

// Go starts run in its own goroutine. A component that returns while the
// group is still running is an error: it stops berth.
func (g *group) Go(name string, run func(ctx context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := run(g.ctx)
		if g.ctx.Err() != nil {
			if err != nil {
				klog.FromContext(g.ctx).Error(err, "Component stopped with an error", "component", name)
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
		g.cancel()
	}()
}

// Wait blocks until every component has returned and reports the first
// failure, or nil when ctx ended.
func (g *group) Wait() error {
	<-g.ctx.Done()
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.first
}
