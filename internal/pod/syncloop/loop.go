package syncloop

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/podworker"
)

// Workers is what the loop needs of the pod workers.
type Workers interface {
	Update(ctx context.Context, opts podworker.UpdateOptions)
	SyncDue(ctx context.Context)
}

// Config holds the loop's inputs. Updates and Events are read only by Run.
type Config struct {
	Updates <-chan podsource.Update
	// ObserveUpdate, if set, sees every source update as the loop takes
	// it, before dispatch (the pod startup tracker's first sighting). It
	// must not block.
	ObserveUpdate func(podsource.Update)
	Events        <-chan pleg.Event
	// ProbeResults carries the UID of a pod whose probe results changed
	// (the prober's Updates); nil when nothing probes.
	ProbeResults <-chan types.UID
	// ResourceUpdates carries the UID of a pod whose devices' health
	// changed (the device manager's Updates, upstream's
	// containerManager.Updates); nil: none.
	ResourceUpdates <-chan types.UID
	// ClaimUpdates carries the UID of a pod whose claims' devices'
	// health changed (the DRA manager's Updates, which upstream's
	// container manager fans into the same channel); nil: none.
	ClaimUpdates <-chan types.UID
	Workers      Workers
	// Admit is asked about every pod new to berth, with the pods already
	// desired, oldest first. It records a rejection itself (failed status,
	// event); the loop dispatches the pod either way. Nil admits everything.
	Admit func(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod)
	// Resize is told of every pod added (after Admit; old nil) or
	// updated from old (its spec may ask for other resources than its
	// allocation: an in-place resize, internal/pod/allocation), once the
	// desired set that holds it is published and before the pod's worker
	// is; nil resizes nothing.
	Resize func(ctx context.Context, old, pod *corev1.Pod)
	// Reconciled is told, once per update, of the pods whose status alone
	// changed in the source, each with the pod it replaces ([old, new]),
	// after the desired set is published (upstream's HandlePodReconcile:
	// a pod that became terminal or shows a decrease applied may make
	// room for a pending resize); nil: not told.
	Reconciled func(ctx context.Context, changes [][2]*corev1.Pod)
	// Housekeeping runs on the housekeeping tick, in a goroutine of its
	// own: it does runtime work (CRI listings, tear-downs, directory
	// removal) and must never hold up a dispatch. The loop keeps admitting
	// pods while it runs, so it reads the desired pods itself (Desired),
	// live, at each decision. Ticks that come while it runs are merged
	// into one more round. Nil disables it.
	Housekeeping func(ctx context.Context)
	// RuntimeErr reports why the runtime cannot be used now (nil: healthy).
	// While it errs the loop backs off and dispatches nothing.
	RuntimeErr func() error
	Clock      clock.WithTicker
	// ResyncPeriod is the dispatch tick (1 s); HousekeepingPeriod 2 s.
	ResyncPeriod       time.Duration
	HousekeepingPeriod time.Duration
	// Desired is where the loop publishes the desired pods (nil: a new
	// one, Loop.Desired).
	Desired *Desired
}

// Loop is the sync loop. Run owns every field but the published snapshot.
type Loop struct {
	cfg Config
	// pods is the desired set and mirrors the mirror pods by full name,
	// both owned by the Run goroutine.
	pods    map[types.UID]*corev1.Pod
	mirrors map[string]*corev1.Pod
	// desired is the published, read-only view of both.
	desired *Desired
	// lastIteration is the unix nano time of the last loop iteration.
	lastIteration atomic.Int64
}

// New validates cfg and returns a loop; it starts nothing.
func New(cfg Config) (*Loop, error) {
	if cfg.Updates == nil || cfg.Workers == nil || cfg.Clock == nil {
		return nil, fmt.Errorf("syncloop: Updates, Workers and Clock are required")
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = time.Second
	}
	if cfg.HousekeepingPeriod <= 0 {
		cfg.HousekeepingPeriod = 2 * time.Second
	}
	if cfg.Desired == nil {
		cfg.Desired = NewDesired()
	}
	l := &Loop{cfg: cfg, pods: map[types.UID]*corev1.Pod{}, mirrors: map[string]*corev1.Pod{}, desired: cfg.Desired}
	l.publish()
	return l, nil
}

// Desired returns the view the loop publishes the desired pods into.
func (l *Loop) Desired() *Desired { return l.desired }

// Pods returns the desired pods, sorted by namespace and name (Desired).
func (l *Loop) Pods() []*corev1.Pod { return l.desired.Pods() }

// LastIteration is when the loop last went round; for health checks.
func (l *Loop) LastIteration() time.Time { return time.Unix(0, l.lastIteration.Load()) }

// Run dispatches until ctx ends; the housekeeping goroutine it starts has
// returned when Run does.
func (l *Loop) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	resync := l.cfg.Clock.NewTicker(l.cfg.ResyncPeriod)
	defer resync.Stop()
	housekeeping := l.cfg.Clock.NewTicker(l.cfg.HousekeepingPeriod)
	defer housekeeping.Stop()
	// houseWake has capacity 1: a tick while a round runs or is pending
	// merges into it.
	houseWake := make(chan struct{}, 1)
	if l.cfg.Housekeeping != nil {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.runHousekeeping(ctx, houseWake)
		}()
		defer func() { cancel(); <-done }()
	}
	backoff := minBackoff
	for {
		l.lastIteration.Store(l.cfg.Clock.Now().UnixNano())
		if err := l.runtimeErr(); err != nil {
			logger.Info("Skipping pod synchronization", "err", err, "retryIn", backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-l.cfg.Clock.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		select {
		case <-ctx.Done():
			return nil
		case u, ok := <-l.cfg.Updates:
			if !ok {
				return fmt.Errorf("syncloop: pod update channel closed")
			}
			if l.cfg.ObserveUpdate != nil {
				l.cfg.ObserveUpdate(u)
			}
			l.handleUpdate(ctx, u)
		case ev := <-l.cfg.Events:
			l.handleEvent(ctx, ev)
		case uid := <-l.cfg.ProbeResults:
			l.handleProbeResult(ctx, uid)
		case uid := <-l.cfg.ResourceUpdates:
			l.syncKnown(ctx, uid, "Resource health changed")
		case uid := <-l.cfg.ClaimUpdates:
			l.syncKnown(ctx, uid, "Resource health changed")
		case <-resync.C():
			l.cfg.Workers.SyncDue(ctx)
		case <-housekeeping.C():
			select {
			case houseWake <- struct{}{}:
			default:
			}
		}
	}
}

// runHousekeeping is the housekeeping goroutine: one round per wake.
func (l *Loop) runHousekeeping(ctx context.Context, wake <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			l.cfg.Housekeeping(ctx)
		}
	}
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

func (l *Loop) runtimeErr() error {
	if l.cfg.RuntimeErr == nil {
		return nil
	}
	return l.cfg.RuntimeErr()
}

func (l *Loop) publish() { l.desired.publish(l.pods, l.mirrors) }
