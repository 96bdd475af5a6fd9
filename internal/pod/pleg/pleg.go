package pleg

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Runtime is what the PLEG needs from the container runtime. Implemented by
// internal/pod/kuberuntime.
type Runtime interface {
	// ListPods returns every pod the runtime holds, keyed by UID, filled
	// only with what the CRI list calls carry (IDs, states, names, creation
	// times). It is called once per relist. The PLEG keeps the returned
	// pods as the base of the next diff: the runtime must not modify them.
	ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error)
	// ListPod is ListPods for one pod (RelistPod); nil when the runtime
	// has nothing of it.
	ListPod(ctx context.Context, uid types.UID) (*runtimestate.Pod, error)
	// PodStatus returns the full status of one pod. It is called only for
	// pods whose containers changed since the previous relist. The result
	// goes into the Cache and is shared with pod workers: it must not be
	// modified afterwards.
	PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*runtimestate.Pod, error)
}

// Defaults, as upstream.
const (
	DefaultPeriod      = time.Second
	DefaultThreshold   = 3 * time.Minute
	DefaultEventBuffer = 1000
)

// Config holds the PLEG's collaborators and settings.
type Config struct {
	Runtime Runtime
	Cache   *Cache
	// Clock paces the relist and stamps the cache (required).
	Clock clock.WithTicker
	// Period between relists; DefaultPeriod when zero.
	Period time.Duration
	// Threshold after which Healthy reports false when no relist has
	// succeeded; DefaultThreshold when zero.
	Threshold time.Duration
	// EventBuffer is the capacity of the Events channel; DefaultEventBuffer
	// when zero. When it is full, events are logged and dropped.
	EventBuffer int
	// Observe, if set, receives the figures of every relist (for metrics).
	// It is called on the relist goroutine and must not block.
	Observe func(RelistStats)
	// Events, if set, is the runtime's container event stream: Run
	// follows it and relists a pod on each of its events (evented.go).
	// Nil: relisting only.
	Events EventSource
	// EventRetry is the first delay before the event stream is
	// reconnected after a failure; DefaultEventRetry when zero.
	EventRetry time.Duration
}

// RelistStats describes one relist.
type RelistStats struct {
	// Duration of the relist, listing and inspections included.
	Duration time.Duration
	// Interval since the start of the previous successful relist (zero
	// for the first one).
	Interval time.Duration
	// Err is the ListPods error, if the relist failed.
	Err error
	// Pods listed, pods inspected, inspections failed, events published
	// and events dropped because the channel was full.
	Pods, Inspected, InspectFailed, Published, Dropped int
	// RunningPods counts the listed pods with a ready sandbox;
	// Containers counts the listed containers by state ("running",
	// "exited", "created", "unknown"; states without containers are
	// absent). Both are zero when the relist failed.
	RunningPods int
	Containers  map[string]int
}

// PLEG relists the runtime periodically and turns changes into events and
// cache updates.
//
// Concurrency: Run owns the relisting; Relist may also be called directly
// (tests) and is serialised by mu. Events and Healthy are safe from any
// goroutine.
type PLEG struct {
	runtime   Runtime
	cache     *Cache
	clock     clock.WithTicker
	period    time.Duration
	threshold time.Duration
	observe   func(RelistStats)
	events    chan Event
	// source is the container event stream (nil: none); eventRetry the
	// first reconnection delay.
	source     EventSource
	eventRetry time.Duration

	// lastRelist is the start time of the last successful relist.
	lastRelist atomic.Pointer[time.Time]

	// mu serialises Relist and guards records and reinspect.
	mu sync.Mutex
	// records is the listing each pod had when it was last inspected
	// successfully (or needed no inspection): the base of the next diff.
	records map[types.UID]*runtimestate.Pod
	// reinspect holds the pods whose inspection failed in the last relist,
	// and those Reinspect names.
	reinspect map[types.UID]bool
}

// New validates cfg, applies defaults and returns a PLEG. It starts nothing.
func New(cfg Config) (*PLEG, error) {
	var errs []error
	if cfg.Runtime == nil {
		errs = append(errs, errors.New("runtime is required"))
	}
	if cfg.Cache == nil {
		errs = append(errs, errors.New("cache is required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("clock is required"))
	}
	if cfg.Period < 0 || cfg.Threshold < 0 || cfg.EventBuffer < 0 || cfg.EventRetry < 0 {
		errs = append(errs, errors.New("period, threshold, event buffer and event retry must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("create pleg: %w", err)
	}
	if cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.EventBuffer == 0 {
		cfg.EventBuffer = DefaultEventBuffer
	}
	if cfg.EventRetry == 0 {
		cfg.EventRetry = DefaultEventRetry
	}
	return &PLEG{
		runtime:    cfg.Runtime,
		cache:      cfg.Cache,
		clock:      cfg.Clock,
		period:     cfg.Period,
		threshold:  cfg.Threshold,
		observe:    cfg.Observe,
		events:     make(chan Event, cfg.EventBuffer),
		source:     cfg.Events,
		eventRetry: cfg.EventRetry,
		records:    make(map[types.UID]*runtimestate.Pod),
		reinspect:  make(map[types.UID]bool),
	}, nil
}

// Events returns the channel the PLEG publishes events on. There is one
// consumer (the sync loop). ContainerChanged events are not published.
func (p *PLEG) Events() <-chan Event {
	return p.events
}

// Run relists immediately, then every Period, until ctx ends; with an
// event source it also follows the container event stream (evented.go).
// It returns nil when ctx ends, once the event watcher has returned.
func (p *PLEG) Run(ctx context.Context) error {
	if p.source != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.watchEvents(ctx)
		}()
		defer func() { <-done }()
	}
	t := p.clock.NewTicker(p.period)
	defer t.Stop()
	for {
		p.Relist(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Healthy reports whether a relist succeeded within the threshold.
func (p *PLEG) Healthy() (bool, error) {
	last := p.lastRelist.Load()
	if last == nil {
		return false, errors.New("pleg has yet to be successful")
	}
	if elapsed := p.clock.Since(*last); elapsed > p.threshold {
		return false, fmt.Errorf("pleg was last seen active %v ago; threshold is %v", elapsed, p.threshold)
	}
	return true, nil
}

// Relist lists the runtime once, inspects the pods that changed (and those
// whose inspection failed last time) into the cache, bumps the cache's
// global timestamp and publishes the events. A pod whose inspection fails
// keeps its previous record, so its events are computed and published
// again by the next relist, once the inspection succeeds.
func (p *PLEG) Relist(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	logger := klog.FromContext(ctx)

	start := p.clock.Now()
	stats := RelistStats{}
	if last := p.lastRelist.Load(); last != nil {
		stats.Interval = start.Sub(*last)
	}
	defer func() {
		stats.Duration = p.clock.Since(start)
		if p.observe != nil {
			p.observe(stats)
		}
	}()

	pods, err := p.runtime.ListPods(ctx)
	if err != nil {
		logger.Error(err, "Relist failed: cannot list pods")
		stats.Err = err
		return
	}
	p.lastRelist.Store(&start)
	stats.Pods = len(pods)
	stats.RunningPods, stats.Containers = countRunning(pods)

	var publish []Event
	reinspect := make(map[types.UID]bool)
	for _, uid := range unionUIDs(p.records, pods) {
		cur := pods[uid]
		events := diffPod(uid, p.records[uid], cur)
		if len(events) == 0 && !p.reinspect[uid] {
			p.commit(uid, cur)
			continue
		}
		stats.Inspected++
		if err := p.updateCache(ctx, uid, cur); err != nil {
			logger.V(4).Info("Inspection failed; retrying at the next relist", "podUID", uid, "err", err)
			stats.InspectFailed++
			reinspect[uid] = true
			continue
		}
		p.commit(uid, cur)
		publish = append(publish, events...)
	}
	p.reinspect = reinspect

	// Only now is every changed pod in the cache: the global timestamp
	// says "the cache knows everything the runtime had at start".
	p.cache.UpdateTime(start)
	stats.Published, stats.Dropped = p.publish(ctx, publish)
}

// updateCache inspects one pod and stores the result (or the error) in the
// cache. A pod gone from the runtime is deleted from the cache instead.
func (p *PLEG) updateCache(ctx context.Context, uid types.UID, cur *runtimestate.Pod) error {
	if cur == nil {
		klog.FromContext(ctx).V(4).Info("Pod gone from the runtime; deleting its status", "podUID", uid)
		p.cache.Delete(uid)
		return nil
	}
	// The timestamp is taken before the read: the status reflects at least
	// everything that happened before it.
	ts := p.clock.Now()
	status, err := p.runtime.PodStatus(ctx, uid, cur.Name, cur.Namespace)
	p.cache.Set(uid, status, err, ts)
	if err != nil {
		return fmt.Errorf("inspect pod %q: %w", uid, err)
	}
	return nil
}

// commit makes cur the base of the pod's next diff.
func (p *PLEG) commit(uid types.UID, cur *runtimestate.Pod) {
	if cur == nil {
		delete(p.records, uid)
		return
	}
	p.records[uid] = cur
}

// publish sends events without blocking, dropping (and logging) those that
// do not fit. ContainerChanged events are not published, as upstream: no
// consumer acts on them.
func (p *PLEG) publish(ctx context.Context, events []Event) (sent, dropped int) {
	for _, e := range events {
		if e.Type == ContainerChanged {
			continue
		}
		select {
		case p.events <- e:
			sent++
		default:
			dropped++
		}
	}
	if dropped > 0 {
		klog.FromContext(ctx).Error(nil, "Event channel is full; dropped events of this relist", "dropped", dropped)
	}
	return sent, dropped
}

// countRunning counts the pods with a ready sandbox and the containers by
// state, as upstream's running pods and containers gauges do. It is pure.
func countRunning(pods map[types.UID]*runtimestate.Pod) (int, map[string]int) {
	running := 0
	states := make(map[string]int)
	for _, pod := range pods {
		for _, c := range pod.Containers {
			states[c.State.String()]++
		}
		for _, sb := range pod.Sandboxes {
			if sb.State == runtimestate.SandboxReady {
				running++
				break
			}
		}
	}
	return running, states
}

// unionUIDs returns the UIDs of both maps, sorted.
func unionUIDs(a, b map[types.UID]*runtimestate.Pod) []types.UID {
	uids := make([]types.UID, 0, len(a)+len(b))
	for uid := range a {
		uids = append(uids, uid)
	}
	for uid := range b {
		if _, ok := a[uid]; !ok {
			uids = append(uids, uid)
		}
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	return uids
}
