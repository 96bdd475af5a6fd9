package allocation

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// RetryPeriod is how often pending (Deferred) resizes are retried, as
// upstream's retryDelay; a pod leaving the node, another resize, a pod
// becoming terminal or one showing a decrease applied retries them at
// once.
const RetryPeriod = 3 * time.Minute

// Recorder records events about pods.
type Recorder interface {
	Eventf(pod *corev1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config holds a Manager's collaborators.
type Config struct {
	// Allocated and Actuated are the two checkpoints (OpenStore).
	Allocated, Actuated *Store
	Clock               clock.WithTicker
	// Pods returns the pods the node runs (admitted, not terminal, not
	// terminated) as the sources give them: their spec, not their
	// allocation.
	Pods func() []*corev1.Pod
	// Node decides which resizes this node can never make (Infeasible,
	// upstream's resize admit handler, tried before Admit).
	Node Node
	// Admit runs the admission chain for a resize: pod at its new
	// resources among others at their allocations. Reason is
	// corev1.PodReasonInfeasible when no retry can help; any other reason
	// defers the resize.
	Admit func(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) (ok bool, reason, message string)
	// Sync asks for a sync of the pod: its allocation or its resize
	// conditions changed.
	Sync     func(ctx context.Context, pod *corev1.Pod)
	Recorder Recorder
	// Metrics records the resize decisions; nil records none.
	Metrics Metrics
}

// Manager owns the pods' allocations, actuations and resize conditions.
// It is safe for concurrent use: mu serializes the allocation decisions
// (the sync loop's Resize, the retries) and guards conds and pending; the
// stores have their own locks.
type Manager struct {
	cfg     Config
	retry   chan struct{}
	mu      sync.Mutex
	conds   map[types.UID]conditions
	pending []types.UID
}

// NewManager validates cfg and returns a Manager. It starts nothing.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Allocated == nil || cfg.Actuated == nil || cfg.Clock == nil || cfg.Pods == nil || cfg.Admit == nil || cfg.Sync == nil || cfg.Recorder == nil {
		return nil, errors.New("allocation: Allocated, Actuated, Clock, Pods, Admit, Sync and Recorder are required")
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	return &Manager{cfg: cfg, retry: make(chan struct{}, 1), conds: map[types.UID]conditions{}}, nil
}

// Run retries pending resizes every RetryPeriod and when Release frees
// resources, until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := m.cfg.Clock.NewTicker(RetryPeriod)
	defer t.Stop()
	for {
		var trigger string
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			trigger = triggerPeriodic
		case <-m.retry:
			trigger = triggerPodsRemoved
		}
		m.mu.Lock()
		m.retryPending(ctx, trigger)
		m.publish()
		m.mu.Unlock()
	}
}

// Allocated returns pod with its allocation (the pod itself when it has
// none yet, or the allocation equals its spec).
func (m *Manager) Allocated(pod *corev1.Pod) *corev1.Pod {
	out, _ := m.cfg.Allocated.apply(pod)
	return out
}

// AllocatedPods returns the pods that have an allocation, with it
// (upstream's getAllocatedPods: a pod not admitted yet does not count).
func (m *Manager) AllocatedPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if a, ok := m.cfg.Allocated.apply(p); ok {
			out = append(out, a)
		}
	}
	return out
}

// Admitted records the allocation of a pod that was just admitted (pod
// is Allocated's answer: after a restart of berth, the allocation it
// had).
func (m *Manager) Admitted(ctx context.Context, pod *corev1.Pod) {
	if err := m.cfg.Allocated.Set(pod.UID, For(pod)); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to checkpoint pod allocation", "pod", klog.KObj(pod))
	}
}

// Resize handles an update of an admitted pod from old (upstream's
// HandlePodUpdates), old nil for a pod new to berth (after a restart of
// berth: upstream's HandlePodAdditions). Each change the update asks of a
// container's cpu or memory is counted, and an update that asks for a
// resize (requested) is one: a spec whose resources differ from the
// allocation is queued and tried at once with the other pending ones; a
// spec back at its allocation clears a pending resize (reverted).
func (m *Manager) Resize(ctx context.Context, old, pod *corev1.Pod) {
	r, ok := m.cfg.Allocated.Get(pod.UID)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	changes, resize := requested(old, pod)
	for _, c := range changes {
		m.cfg.Metrics.ObserveRequestedResize(c.resource, c.requirement, c.operation)
	}
	if !resize {
		return
	}
	defer m.publish()
	if _, differs := Apply(pod, r); !differs {
		m.resolvePending(pod.UID, pod, resolutionReverted)
		return
	}
	if !slices.Contains(m.pending, pod.UID) {
		m.pending = append(m.pending, pod.UID)
	}
	trigger := triggerPodUpdated
	if old == nil {
		trigger = triggerPodsAdded
	}
	m.retryPending(ctx, trigger)
}

// Reconciled handles pods whose status alone changed in the source, each
// with the pod it replaces (upstream's HandlePodReconcile). With resizes
// pending, the first that may have made room retries them, once for the
// whole batch: a pod that became terminal (pod_terminated), or one whose
// cpu or memory requests shrank as its status came to show a decrease
// applied (pod_resized, which wins when both hold).
func (m *Manager) Reconciled(ctx context.Context, changes [][2]*corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return
	}
	for _, c := range changes {
		if trigger := reconcileTrigger(m.Allocated(c[0]), m.Allocated(c[1])); trigger != "" {
			m.retryPending(ctx, trigger)
			m.publish()
			return
		}
	}
}

// reconcileTrigger is why a status change of an allocated pod from old
// to pod retries the pending resizes, or "" when it does not.
func reconcileTrigger(old, pod *corev1.Pod) string {
	trigger := ""
	if podutil.IsTerminal(pod.Status.Phase) && !podutil.IsTerminal(old.Status.Phase) {
		trigger = triggerPodTerminated
	}
	if lessCPUOrMemory(podutil.HeldRequests(pod), podutil.HeldRequests(old)) {
		trigger = triggerPodResized
	}
	return trigger
}

// Forget drops the allocation, actuation, resize conditions and pending
// resize of a pod that is gone (podgone.Owner), and retries the pending
// resizes, which may fit now.
func (m *Manager) Forget(ctx context.Context, uid types.UID) {
	logger := klog.FromContext(ctx)
	for _, s := range []*Store{m.cfg.Allocated, m.cfg.Actuated} {
		if err := s.Retain(func(u types.UID) bool { return u != uid }); err != nil {
			logger.Error(err, "Failed to remove pod from checkpoint", "podUID", uid)
		}
	}
	m.mu.Lock()
	m.resolvePending(uid, nil, resolutionTerminated)
	delete(m.conds, uid)
	m.pending = slices.DeleteFunc(m.pending, func(u types.UID) bool { return u == uid })
	retry := len(m.pending) > 0
	m.publish()
	m.mu.Unlock()
	if retry {
		select {
		case m.retry <- struct{}{}:
		default:
		}
	}
}

// HeldPods lists the pods with an allocation, an actuation, resize
// conditions or a pending resize (podgone.Holder): after a restart of
// berth, the checkpoints hold the pods that left while it was down.
func (m *Manager) HeldPods() []types.UID {
	held := map[types.UID]struct{}{}
	for _, s := range []*Store{m.cfg.Allocated, m.cfg.Actuated} {
		for _, uid := range s.uids() {
			held[uid] = struct{}{}
		}
	}
	m.mu.Lock()
	for uid := range m.conds {
		held[uid] = struct{}{}
	}
	for _, uid := range m.pending {
		held[uid] = struct{}{}
	}
	m.mu.Unlock()
	return slices.Collect(maps.Keys(held))
}

// retryPending tries every pending resize, most likely to succeed first
// (upstream's sortPendingResizes); the deferred ones stay pending, and
// the Deferred ones that leave are counted for trigger (mu held).
func (m *Manager) retryPending(ctx context.Context, trigger string) {
	if len(m.pending) == 0 {
		return
	}
	pods := m.cfg.Pods()
	byUID := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		byUID[p.UID] = p
	}
	var queue []*corev1.Pod
	for _, uid := range m.pending {
		if p, ok := byUID[uid]; ok {
			queue = append(queue, p)
		}
	}
	m.sortPending(queue)
	m.pending = m.pending[:0]
	for _, pod := range queue {
		c := m.conds[pod.UID].pending
		wasDeferred := c != nil && c.Reason == corev1.PodReasonDeferred
		switch m.tryResize(ctx, pod, pods) {
		case outcomeDeferred, outcomeFailed:
			m.pending = append(m.pending, pod.UID)
		case outcomeInfeasible:
		default:
			// As upstream's retryPendingResizes: a Deferred resize that
			// leaves the queue neither deferred, infeasible nor failed
			// counts as accepted, even one whose spec went back to its
			// allocation.
			if wasDeferred {
				m.cfg.Metrics.ObserveDeferredAcceptedResize(trigger)
			}
		}
	}
}

// outcome is what one try of a pending resize came to.
type outcome int

const (
	// outcomeAllocated: admitted, the resize is the pod's allocation.
	outcomeAllocated outcome = iota
	// outcomeUnchanged: the spec is at its allocation (or the pod has
	// none): nothing to resize.
	outcomeUnchanged
	// outcomeDeferred: it does not fit now; retried later.
	outcomeDeferred
	// outcomeInfeasible: the node can never make it.
	outcomeInfeasible
	// outcomeFailed: admitted, but the allocation was not recorded;
	// retried later.
	outcomeFailed
)

// tryResize admits the pod's resize or records why not (mu held).
func (m *Manager) tryResize(ctx context.Context, pod *corev1.Pod, pods []*corev1.Pod) outcome {
	r, ok := m.cfg.Allocated.Get(pod.UID)
	if !ok {
		return outcomeUnchanged
	}
	allocated, differs := Apply(pod, r)
	if !differs {
		m.resolvePending(pod.UID, pod, resolutionReverted)
		return outcomeUnchanged
	}
	if message, detail := Infeasible(pod, allocated, m.cfg.Node); detail != "" {
		m.cfg.Metrics.ObserveInfeasibleResize(detail)
		return m.pend(ctx, pod, corev1.PodReasonInfeasible, message)
	}
	others := m.AllocatedPods(slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return p.UID == pod.UID }))
	fit, reason, message := m.cfg.Admit(ctx, pod, others)
	if !fit {
		return m.pend(ctx, pod, reason, message)
	}
	if err := m.cfg.Allocated.Set(pod.UID, For(pod)); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to checkpoint pod allocation", "pod", klog.KObj(pod))
		return outcomeFailed
	}
	m.resolvePending(pod.UID, pod, resolutionAccepted)
	c := m.conds[pod.UID]
	c.inProgress = m.condition(corev1.PodResizeInProgress, nil, "", "", pod.Generation)
	m.conds[pod.UID] = c
	m.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, EventResizeStarted, "%s", EventMessage(pod, pod.Generation, "", MessageResizeStarted))
	m.cfg.Sync(ctx, pod)
	return outcomeAllocated
}

// pend records why the pod's resize is not admitted: its PodResizePending
// condition, Infeasible or Deferred (every other reason), with an event
// and a sync when the reason or the generation is new (mu held).
func (m *Manager) pend(ctx context.Context, pod *corev1.Pod, reason, message string) outcome {
	if reason != corev1.PodReasonInfeasible {
		reason = corev1.PodReasonDeferred
	}
	c := m.conds[pod.UID]
	old := c.pending
	c.pending, c.pod = m.condition(corev1.PodResizePending, old, reason, message, pod.Generation), pod
	m.conds[pod.UID] = c
	if old == nil || old.Reason != reason || old.ObservedGeneration != pod.Generation {
		event := EventResizeDeferred
		if reason == corev1.PodReasonInfeasible {
			event = EventResizeInfeasible
		}
		m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, event, "%s", EventMessage(pod, pod.Generation, message, "Pod resize "+reason))
		m.cfg.Sync(ctx, pod)
	}
	klog.FromContext(ctx).V(3).Info("Pod resize pending", "pod", klog.KObj(pod), "reason", reason, "message", message)
	if reason == corev1.PodReasonInfeasible {
		return outcomeInfeasible
	}
	return outcomeDeferred
}

// sortPending orders pending resizes as upstream: those that do not
// increase requests first, then by priority, then Guaranteed before
// Burstable, then the longest pending.
func (m *Manager) sortPending(pods []*corev1.Pod) {
	increasing := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		increasing[p.UID] = m.increasesRequests(p)
	}
	since := func(p *corev1.Pod) time.Time {
		if c := m.conds[p.UID].pending; c != nil {
			return c.LastTransitionTime.Time
		}
		return time.Time{}
	}
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		if ia, ib := increasing[a.UID], increasing[b.UID]; ia != ib {
			if !ia {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(priority(b), priority(a)); c != 0 {
			return c
		}
		if ga, gb := podutil.QOSClass(a) == corev1.PodQOSGuaranteed, podutil.QOSClass(b) == corev1.PodQOSGuaranteed; ga != gb {
			if ga {
				return -1
			}
			return 1
		}
		return since(a).Compare(since(b))
	})
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// increasesRequests reports whether the pod's resize raises its cpu or
// memory requests over its allocation.
func (m *Manager) increasesRequests(pod *corev1.Pod) bool {
	allocated := m.Allocated(pod)
	if allocated == pod {
		return false
	}
	return lessCPUOrMemory(podutil.PodRequests(allocated), podutil.PodRequests(pod))
}

// lessCPUOrMemory reports whether a asks for less memory or less cpu than
// b: the comparison upstream makes of a pod's requests before and after a
// change (sortPendingResizes, HandlePodReconcile).
func lessCPUOrMemory(a, b corev1.ResourceList) bool {
	return a.Memory().Cmp(*b.Memory()) < 0 || a.Cpu().Cmp(*b.Cpu()) < 0
}

// Actuated returns what berth last set on the pod's containers and pod
// cgroup.
func (m *Manager) Actuated(uid types.UID) (PodResources, bool) {
	return m.cfg.Actuated.Get(uid)
}

// SetActuated records what the runtime applied: the resources of the
// named containers, and the pod-level resources when pod is set.
func (m *Manager) SetActuated(uid types.UID, containers map[string]corev1.ResourceRequirements, pod *corev1.ResourceRequirements, setPod bool) error {
	return m.cfg.Actuated.Update(uid, func(r *PodResources) {
		if r.ContainerResources == nil {
			r.ContainerResources = map[string]corev1.ResourceRequirements{}
		}
		for name, rr := range containers {
			r.ContainerResources[name] = *rr.DeepCopy()
		}
		if setPod {
			r.PodLevelResources = pod.DeepCopy()
		}
	})
}
