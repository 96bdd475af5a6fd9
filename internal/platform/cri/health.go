package cri

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// MaxWaitForRuntime is how long the runtime may fail to answer Status
// before it is down (upstream's maxWaitForContainerRuntime): a runtime that
// answered within it and then fails to answer (a restart, a hiccup) keeps
// its last verdict, so the Node stays Ready and pods keep syncing, as with
// upstream. A runtime that answers it is not ready is not ready at once.
const MaxWaitForRuntime = 30 * time.Second

// Health polls the runtime's Status and publishes the verdict. Run (one
// goroutine) owns the polling; Err and Info may be read from any goroutine.
type Health struct {
	client *Client
	clock  clock.WithTicker
	period time.Duration
	// onChange, if set, is called from the checking goroutine when the
	// verdict flips between healthy and unhealthy.
	onChange func()
	// err holds the latest verdict: nil when the runtime is ready; info
	// the latest status the runtime reported.
	err  atomic.Pointer[error]
	info atomic.Pointer[Info]
	// lastOK is when Status last answered (zero: never); only Check,
	// called by one goroutine at a time, reads and writes it.
	lastOK time.Time
}

// NewHealth returns a Health that checks c every period; onChange (may be
// nil) is told when the verdict flips. Until the first Check, Err reports
// that the runtime was not checked yet.
func NewHealth(c *Client, clk clock.WithTicker, period time.Duration, onChange func()) *Health {
	h := &Health{client: c, clock: clk, period: period, onChange: onChange}
	notYet := errors.New("container runtime status not checked yet")
	h.err.Store(&notYet)
	return h
}

// Err reports why the runtime cannot run pods now, or nil.
func (h *Health) Err() error { return *h.err.Load() }

// Info is the latest status the runtime reported (zero before the first).
func (h *Health) Info() Info {
	if i := h.info.Load(); i != nil {
		return *i
	}
	return Info{}
}

// Run checks the runtime now and then every period until ctx ends.
func (h *Health) Run(ctx context.Context) error {
	t := h.clock.NewTicker(h.period)
	defer t.Stop()
	for {
		h.Check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Check asks the runtime for its status now and publishes the verdict. A
// failed call changes nothing (the last status and verdict stand) until
// the runtime has not answered for MaxWaitForRuntime, or when it never
// has; then the runtime is down.
func (h *Health) Check(ctx context.Context) {
	info, err := h.client.Status(ctx)
	now := h.clock.Now()
	switch {
	case err != nil && !h.lastOK.IsZero() && now.Sub(h.lastOK) < MaxWaitForRuntime:
		klog.FromContext(ctx).Error(err, "Container runtime status check failed", "lastAnswered", h.lastOK, "downAfter", MaxWaitForRuntime)
		return
	case err != nil:
		err = fmt.Errorf("container runtime is down: %w", err)
	default:
		h.lastOK = now
		h.info.Store(&info)
		if !info.RuntimeReady {
			err = errors.New("container runtime is not ready")
		}
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
