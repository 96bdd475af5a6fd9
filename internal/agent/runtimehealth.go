package agent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/cri"
)

// runtimeHealth polls the runtime's Status and publishes the verdict.
type runtimeHealth struct {
	client *cri.Client
	clock  clock.WithTicker
	period time.Duration
	// err holds the latest verdict: nil when the runtime is ready; info
	// the latest status the runtime reported.
	err  atomic.Pointer[error]
	info atomic.Pointer[cri.Info]
	// onChange, when set before Run, is called from Run's goroutine when
	// the verdict flips between healthy and unhealthy.
	onChange func()
}

func newRuntimeHealth(c *cri.Client, clk clock.WithTicker, period time.Duration) *runtimeHealth {
	h := &runtimeHealth{client: c, clock: clk, period: period}
	notYet := errors.New("container runtime status not checked yet")
	h.err.Store(&notYet)
	return h
}

// Err reports why the runtime cannot run pods now, or nil.
func (h *runtimeHealth) Err() error { return *h.err.Load() }

// Info is the latest status the runtime reported (zero before the first).
func (h *runtimeHealth) Info() cri.Info {
	if i := h.info.Load(); i != nil {
		return *i
	}
	return cri.Info{}
}

// Run checks the runtime now and then every period until ctx ends.
func (h *runtimeHealth) Run(ctx context.Context) error {
	t := h.clock.NewTicker(h.period)
	defer t.Stop()
	for {
		h.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

func (h *runtimeHealth) check(ctx context.Context) {
	info, err := h.client.Status(ctx)
	h.info.Store(&info)
	switch {
	case err != nil:
		err = fmt.Errorf("container runtime is down: %w", err)
	case !info.RuntimeReady:
		err = errors.New("container runtime is not ready")
	}
	prev := h.Err()
	if (prev == nil) != (err == nil) {
		if h.onChange != nil {
			defer h.onChange()
		}
		if err != nil {
			klog.FromContext(ctx).Error(err, "Container runtime unhealthy")
		} else {
			klog.FromContext(ctx).Info("Container runtime healthy")
		}
	}
	h.err.Store(&err)
}
