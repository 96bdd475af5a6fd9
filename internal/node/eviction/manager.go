package eviction

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// DefaultMonitoringPeriod is how often the manager looks at the node, as
// upstream's evictionMonitoringPeriod (10 s).
const DefaultMonitoringPeriod = 10 * time.Second

// After a pass that evicted, Run waits up to podCleanupTimeout for the
// evicted pods to be cleaned up, looking every podCleanupPollFreq, before
// it passes again (upstream's waitForPodsCleanup): the next pass must see
// what the eviction freed, or it evicts a second pod for the same
// pressure (a memory-backed emptyDir holds its memory until unmounted).
const (
	podCleanupTimeout  = 30 * time.Second
	podCleanupPollFreq = time.Second
)

// SummaryFunc returns the node's and pods' stats (stats.Provider.Summary).
type SummaryFunc func(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)

// Killer ends a pod for an eviction. Evict must not block on the kill: the
// pod's worker stops ev.Pod with ev.GracePeriod seconds, and its status
// reports phase Failed, reason Reason and ev.Message, with a
// DisruptionTarget condition (reason TerminationByKubelet) unless
// ev.NoDisruptionTarget.
type Killer interface {
	Evict(ctx context.Context, ev Eviction)
}

// NodeReclaimer frees disk at the node level before pods are evicted for
// a filesystem signal, as upstream's ContainerGC.DeleteAllUnusedContainers
// and ImageGC.DeleteUnusedImages (called in that order).
type NodeReclaimer interface {
	DeleteAllUnusedContainers(ctx context.Context) error
	DeleteUnusedImages(ctx context.Context) error
}

// Recorder records the Evicted event on a pod and EvictionThresholdMet on
// the node.
type Recorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// reasonThresholdMet is upstream's node event when a threshold drives a
// reclaim.
const reasonThresholdMet = "EvictionThresholdMet"

// Metrics records evictions (internal/serve/metrics); may be nil.
type Metrics interface {
	ObserveEviction(signal string)
	ObserveEvictionStatsAge(signal string, age time.Duration)
}

// Config is what New needs.
type Config struct {
	Thresholds []Threshold
	// LocalStorageCapacityIsolation is localStorageCapacityIsolation:
	// each pass first evicts the pods over their local storage limits
	// (LocalStorageEvictions). Off, as upstream, those limits are not
	// enforced.
	LocalStorageCapacityIsolation bool
	TransitionPeriod              time.Duration
	MaxPodGracePeriod             int64
	// MonitoringPeriod is DefaultMonitoringPeriod when zero.
	MonitoringPeriod time.Duration
	Summary          SummaryFunc
	// ActivePods are the admitted pods that still count against the node
	// (podworker.Workers.ActivePods).
	ActivePods func() []*corev1.Pod
	// Terminating reports a pod whose termination was requested already:
	// it is not evicted again (nil: none is).
	Terminating func(types.UID) bool
	// PodCleanedUp reports whether an evicted pod is cleaned up: its
	// containers stopped, its volumes torn down (upstream's
	// PodCleanedUpFunc, the pod workers' ShouldPodBeFinished).
	PodCleanedUp func(*corev1.Pod) bool
	Killer       Killer
	// Reclaimer may be nil: no node-level reclaim.
	Reclaimer NodeReclaimer
	Recorder  Recorder
	Metrics   Metrics
	// OnConditions is called when the node conditions change (to update
	// the node status at once); may be nil.
	OnConditions func()
	Clock        clock.WithTicker
	// Notifier, when set (kernelMemcgNotification on cgroup v1), arms a
	// kernel notification for every memory threshold on its cgroup in
	// MemoryCgroups, re-armed from the summary every 10 s; a crossing
	// makes Run pass at once instead of at the next monitoring period.
	Notifier      Notifier
	MemoryCgroups MemoryCgroups
}

// Manager is the eviction manager. Run is its only goroutine and owns the
// decision state; Conditions, Admit and Explain read snapshots published
// by Run and may be called from any goroutine.
type Manager struct {
	cfg   Config
	state State
	// thresholds are cfg.Thresholds with the containerfs ones, set at the
	// first summary (which tells whether the image filesystem is
	// dedicated).
	thresholds []Threshold
	// conditions is the latest set of true node conditions.
	conditions atomic.Pointer[[]corev1.NodeConditionType]
	// wake has Run pass now (a memory notification); capacity 1.
	wake chan struct{}
	// armed are the memory notifications by threshold key, and armedAt
	// when they were last armed; owned by Run.
	armed   map[string]io.Closer
	armedAt time.Time
	// mu guards last, the last pass's Snapshot (nil before the first),
	// which Pass replaces whole and Explain reads.
	mu   sync.Mutex
	last *Snapshot
}

// New validates cfg and returns a Manager; it starts nothing.
func New(cfg Config) (*Manager, error) {
	if cfg.Summary == nil || cfg.ActivePods == nil || cfg.PodCleanedUp == nil || cfg.Killer == nil || cfg.Recorder == nil || cfg.Clock == nil {
		return nil, errors.New("create eviction manager: Summary, ActivePods, PodCleanedUp, Killer, Recorder and Clock are required")
	}
	if cfg.MonitoringPeriod <= 0 {
		cfg.MonitoringPeriod = DefaultMonitoringPeriod
	}
	m := &Manager{cfg: cfg, wake: make(chan struct{}, 1), armed: map[string]io.Closer{}}
	m.conditions.Store(&[]corev1.NodeConditionType{})
	return m, nil
}

// Conditions are the node conditions that are true now, sorted.
func (m *Manager) Conditions() []corev1.NodeConditionType { return *m.conditions.Load() }

// Pressure is Conditions as nodestatus reads them.
func (m *Manager) Pressure() Pressure { return PressureOf(m.Conditions()) }

// AdmitPod is Admit under the current conditions.
func (m *Manager) AdmitPod(pod *corev1.Pod) (bool, string) { return Admit(pod, m.Conditions()) }

// Explain explains the last pass (Explain over its Snapshot), or says
// that the manager has not observed the node yet. It takes no stats of
// its own and may be called from any goroutine.
func (m *Manager) Explain() Explanation {
	m.mu.Lock()
	s := m.last
	m.mu.Unlock()
	if s == nil {
		return NotObserved()
	}
	return Explain(*s)
}

// publish keeps s as the last pass's snapshot.
func (m *Manager) publish(s *Snapshot) {
	m.mu.Lock()
	m.last = s
	m.mu.Unlock()
}

// Run looks at the node every monitoring period, and at once when a
// memory notification fires, until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	t := m.cfg.Clock.NewTicker(m.cfg.MonitoringPeriod)
	defer t.Stop()
	defer m.disarm()
	for {
		if evicted := m.Pass(ctx); len(evicted) > 0 {
			m.waitForCleanup(ctx, evicted)
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		case <-m.wake:
		}
	}
}

// localStorageEvictions are LocalStorageEvictions when local storage is
// isolated, else none.
func (m *Manager) localStorageEvictions(pods []*corev1.Pod, stats PodStats, dedicated bool) []Eviction {
	if !m.cfg.LocalStorageCapacityIsolation {
		return nil
	}
	return LocalStorageEvictions(pods, stats, dedicated)
}

// Pass is one look at the node (upstream's synchronize): it updates the
// conditions, then evicts the pods over their local storage limits or,
// failing those, reclaims at most one pod's worth for the most pressing
// threshold. It returns the pods it evicted. Only Run and tests call it.
func (m *Manager) Pass(ctx context.Context) []*corev1.Pod {
	logger := klog.FromContext(ctx)
	sum, err := m.cfg.Summary(ctx, false)
	if err != nil {
		logger.Error(err, "Eviction manager: cannot get summary stats")
		return nil
	}
	if m.thresholds == nil {
		m.thresholds = WithContainerFs(m.cfg.Thresholds, DedicatedImageFs(sum))
	}
	m.rearm(ctx, sum)
	obs, now := Observe(sum), m.cfg.Clock.Now()
	d := Decide(Input{Thresholds: m.thresholds, Observations: obs, Previous: m.state,
		TransitionPeriod: m.cfg.TransitionPeriod, Now: now})
	m.state = d.Next
	if prev := m.Conditions(); !slices.Equal(prev, d.Conditions) {
		conds := d.Conditions
		m.conditions.Store(&conds)
		logger.Info("Eviction manager: node conditions changed", "conditions", conds)
		if m.cfg.OnConditions != nil {
			m.cfg.OnConditions()
		}
	}
	pods, stats, dedicated := m.evictable(), PodStatsOf(sum), DedicatedImageFs(sum)
	snap := &Snapshot{At: now, Thresholds: m.thresholds, Observations: obs, Decision: d, Pods: pods, Stats: stats,
		DedicatedImageFs: dedicated, MaxPodGracePeriod: m.cfg.MaxPodGracePeriod,
		LocalStorageCapacityIsolation: m.cfg.LocalStorageCapacityIsolation}
	defer m.publish(snap)
	if evs := m.localStorageEvictions(pods, stats, dedicated); len(evs) > 0 {
		snap.Evicted = evs
		evicted := make([]*corev1.Pod, 0, len(evs))
		for _, ev := range evs {
			m.evict(ctx, ev)
			evicted = append(evicted, ev.Pod)
		}
		return evicted
	}
	if d.Reclaim == nil {
		return nil
	}
	logger.Info("Eviction manager: attempting to reclaim", "resourceName", d.Resource)
	m.cfg.Recorder.NodeEventf(corev1.EventTypeWarning, reasonThresholdMet, "Attempting to reclaim %s", d.Resource)
	if NodeReclaimable(d.Reclaim.Signal, dedicated) && m.reclaimNode(ctx) {
		logger.Info("Eviction manager: able to reduce resource pressure without evicting pods.", "resourceName", d.Resource)
		return nil
	}
	if mt := m.cfg.Metrics; mt != nil {
		for _, t := range d.Act {
			if at := obs[t.Signal].Time; !at.IsZero() {
				mt.ObserveEvictionStatsAge(string(t.Signal), m.cfg.Clock.Since(at))
			}
		}
	}
	ev, ok := Choose(ChooseInput{Decision: d, Observations: obs, Pods: pods, Stats: stats,
		DedicatedImageFs: dedicated, MaxPodGracePeriod: m.cfg.MaxPodGracePeriod})
	if !ok {
		logger.Info("Eviction manager: unable to evict any pods from the node")
		return nil
	}
	m.evict(ctx, ev)
	snap.Evicted = []Eviction{ev}
	return []*corev1.Pod{ev.Pod}
}

// waitForCleanup waits until every pod of pods is cleaned up
// (Config.PodCleanedUp), podCleanupTimeout at most, or ctx ends.
func (m *Manager) waitForCleanup(ctx context.Context, pods []*corev1.Pod) {
	logger := klog.FromContext(ctx)
	logger.Info("Eviction manager: pods evicted, waiting for pod to be cleaned up", "pods", klog.KObjSlice(pods))
	timeout := m.cfg.Clock.NewTimer(podCleanupTimeout)
	defer timeout.Stop()
	poll := m.cfg.Clock.NewTicker(podCleanupPollFreq)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C():
			logger.Info("Eviction manager: timed out waiting for pods to be cleaned up", "pods", klog.KObjSlice(pods))
			return
		case <-poll.C():
			if !slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return !m.cfg.PodCleanedUp(p) }) {
				logger.Info("Eviction manager: pods successfully cleaned up", "pods", klog.KObjSlice(pods))
				return
			}
		}
	}
}

// reclaimNode runs the node-level reclaim and reports whether every
// threshold is then resolved, minimum reclaim included.
func (m *Manager) reclaimNode(ctx context.Context) bool {
	r := m.cfg.Reclaimer
	if r == nil {
		return false
	}
	logger := klog.FromContext(ctx)
	if err := r.DeleteAllUnusedContainers(ctx); err != nil {
		logger.Info("Eviction manager: unexpected error when attempting to reduce resource pressure", "err", err)
	}
	if err := r.DeleteUnusedImages(ctx); err != nil {
		logger.Info("Eviction manager: unexpected error when attempting to reduce resource pressure", "err", err)
	}
	sum, err := m.cfg.Summary(ctx, false)
	if err != nil {
		logger.Error(err, "Eviction manager: cannot get summary stats after resource reclaim")
		return false
	}
	return len(ThresholdsMet(m.thresholds, Observe(sum), true)) == 0
}

func (m *Manager) evict(ctx context.Context, ev Eviction) {
	klog.FromContext(ctx).Info("Eviction manager: evicting pod", "pod", klog.KObj(ev.Pod), "signal", ev.Signal,
		"gracePeriod", ev.GracePeriod, "message", ev.Message)
	m.cfg.Recorder.Eventf(ev.Pod, corev1.EventTypeWarning, Reason, "%s", ev.Message)
	m.cfg.Killer.Evict(ctx, ev)
	if m.cfg.Metrics != nil {
		m.cfg.Metrics.ObserveEviction(string(ev.Signal))
	}
}

// DedicatedImageFs reports whether the summary's image filesystem is apart
// from the node's. The summary names no devices, so two filesystems of the
// same capacity in bytes and inodes are taken for one.
func DedicatedImageFs(s *statsapi.Summary) bool {
	if s == nil || s.Node.Fs == nil || s.Node.Runtime == nil || s.Node.Runtime.ImageFs == nil {
		return false
	}
	n, i := s.Node.Fs, s.Node.Runtime.ImageFs
	return !(eq(n.CapacityBytes, i.CapacityBytes) && eq(n.Inodes, i.Inodes))
}

func eq(a, b *uint64) bool { return a != nil && b != nil && *a == *b }

// evictable are the active pods whose termination was not requested yet:
// an evicted pod is not evicted again. The slice is the manager's own
// (the last pass's Snapshot keeps it), never ActivePods'.
func (m *Manager) evictable() []*corev1.Pod {
	pods := m.cfg.ActivePods()
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if m.cfg.Terminating == nil || !m.cfg.Terminating(p.UID) {
			out = append(out, p)
		}
	}
	return out
}
