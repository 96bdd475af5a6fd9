package pluginmanager

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

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
			r := o.m.perform(ctx, op, reg)
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
