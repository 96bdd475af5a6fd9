package allocation

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Metrics records the Manager's resize decisions (internal/serve/metrics's
// in-place resize metrics). Its methods are called with the Manager's
// lock held and must not call back into it.
type Metrics interface {
	// ObserveRequestedResize counts one change an update asks of a
	// container's cpu or memory requests or limits.
	ObserveRequestedResize(resource, requirement, operation string)
	// ObserveInfeasibleResize counts one resize found infeasible.
	ObserveInfeasibleResize(detail string)
	// ObserveDeferredAcceptedResize counts one Deferred resize that a
	// retry, for trigger, took out of the pending queue.
	ObserveDeferredAcceptedResize(trigger string)
	// ObserveDeferredResize records how long a resize stayed Deferred
	// before its resolution; pod is nil once the pod is gone.
	ObserveDeferredResize(resolution string, pod *corev1.Pod, waited time.Duration)
	// SetPendingResizes and SetInProgressResizes set the gauges: each pod
	// with a PodResizePending condition and its reason, and the number of
	// pods with a PodResizeInProgress condition.
	SetPendingResizes(reasons map[*corev1.Pod]string)
	SetInProgressResizes(n int)
}

// The retry_trigger of kubelet_pod_deferred_accepted_resizes_total: why
// the pending resizes were retried, as upstream's TriggerReason* (pinned
// by TestTriggersMatchUpstream).
const (
	triggerPodResized    = "pod_resized"
	triggerPodUpdated    = "pod_updated"
	triggerPodsAdded     = "pods_added"
	triggerPodsRemoved   = "pods_removed"
	triggerPodTerminated = "pod_terminated"
	triggerPeriodic      = "periodic_retry"
)

// The resolutions of a Deferred resize, as upstream's
// DeferredResizeResolution* (pinned by TestResolutionsMatchUpstream).
const (
	resolutionAccepted   = "accepted"
	resolutionReverted   = "reverted"
	resolutionTerminated = "terminated"
)

// noMetrics records nothing (Config.Metrics nil).
type noMetrics struct{}

func (noMetrics) ObserveRequestedResize(string, string, string)            {}
func (noMetrics) ObserveInfeasibleResize(string)                           {}
func (noMetrics) ObserveDeferredAcceptedResize(string)                     {}
func (noMetrics) ObserveDeferredResize(string, *corev1.Pod, time.Duration) {}
func (noMetrics) SetPendingResizes(map[*corev1.Pod]string)                 {}
func (noMetrics) SetInProgressResizes(int)                                 {}

// publish sets the pending and in-progress gauges from the resize
// conditions, as upstream's observePendingResizeCount and
// recordInProgressResizeCount (mu held).
func (m *Manager) publish() {
	pending := map[*corev1.Pod]string{}
	inProgress := 0
	for _, c := range m.conds {
		if c.pending != nil {
			pending[c.pod] = c.pending.Reason
		}
		if c.inProgress != nil {
			inProgress++
		}
	}
	m.cfg.Metrics.SetPendingResizes(pending)
	m.cfg.Metrics.SetInProgressResizes(inProgress)
}
