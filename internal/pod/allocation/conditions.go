package allocation

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// conditions are a pod's resize conditions; nil is absent. pod is the pod
// whose resize is pending, for the pending gauge's priority bucket.
type conditions struct {
	pending, inProgress *corev1.PodCondition
	pod                 *corev1.Pod
}

// Conditions returns the pod's resize conditions (PodResizePending, then
// PodResizeInProgress), as the status shows them.
func (m *Manager) Conditions(uid types.UID) []corev1.PodCondition {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conds[uid]
	var out []corev1.PodCondition
	for _, p := range []*corev1.PodCondition{c.pending, c.inProgress} {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// SetInProgress sets the pod's PodResizeInProgress condition, as
// upstream's SetPodResizeInProgressCondition: an existing condition keeps
// its observedGeneration, and its reason and message when none are given.
// It returns the condition's generation and whether it changed.
func (m *Manager) SetInProgress(uid types.UID, reason, message string, generation int64) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conds[uid]
	old := c.inProgress
	if old != nil {
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
		generation = old.ObservedGeneration
	}
	c.inProgress = m.condition(corev1.PodResizeInProgress, old, reason, message, generation)
	m.conds[uid] = c
	if old == nil {
		m.publish()
	}
	changed := old == nil || old.Reason != reason || old.Message != message
	return generation, changed
}

// ClearInProgress drops the pod's PodResizeInProgress condition; it
// returns the generation the condition had and whether there was one.
func (m *Manager) ClearInProgress(uid types.UID) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conds[uid]
	if !ok || c.inProgress == nil {
		return 0, false
	}
	g := c.inProgress.ObservedGeneration
	c.inProgress = nil
	m.conds[uid] = c
	m.publish()
	return g, true
}

// Backfill takes the resize conditions of pods from their API status, as
// upstream's BackfillPodResizeConditions after a restart.
func (m *Manager) Backfill(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.conds[pod.UID]; ok {
		return
	}
	var c conditions
	for i := range pod.Status.Conditions {
		pc := pod.Status.Conditions[i]
		switch pc.Type {
		case corev1.PodResizePending:
			c.pending, c.pod = m.condition(pc.Type, nil, pc.Reason, pc.Message, pc.ObservedGeneration), pod
		case corev1.PodResizeInProgress:
			c.inProgress = m.condition(pc.Type, nil, pc.Reason, pc.Message, pc.ObservedGeneration)
		}
	}
	if c.pending != nil || c.inProgress != nil {
		m.conds[pod.UID] = c
		if c.pending != nil && c.pending.Reason == corev1.PodReasonDeferred {
			m.pending = append(m.pending, pod.UID)
		}
		m.publish()
	}
}

// condition is upstream's updatedPodResizeCondition: True, probed now,
// transitioned now unless the reason is unchanged.
func (m *Manager) condition(t corev1.PodConditionType, old *corev1.PodCondition, reason, message string, generation int64) *corev1.PodCondition {
	now := metav1.NewTime(m.cfg.Clock.Now())
	transition := now
	if old != nil && old.Reason == reason {
		transition = old.LastTransitionTime
	}
	return &corev1.PodCondition{
		Type: t, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: transition,
		ObservedGeneration: generation, Reason: reason, Message: message,
	}
}

// Terminated drops the resize conditions of a pod in a terminal phase, as
// upstream's determinePodResizeStatus: a Deferred resize is resolved as
// terminated.
func (m *Manager) Terminated(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.conds[pod.UID]; !ok {
		return
	}
	m.resolvePending(pod.UID, pod, resolutionTerminated)
	delete(m.conds, pod.UID)
	m.pending = slices.DeleteFunc(m.pending, func(u types.UID) bool { return u == pod.UID })
	m.publish()
}

// resolvePending drops the pod's PodResizePending condition, as upstream's
// ClearPodResizePendingCondition: a Deferred one records how long it
// waited and how it was resolved. pod is nil once the pod is gone (mu
// held).
func (m *Manager) resolvePending(uid types.UID, pod *corev1.Pod, resolution string) {
	c, ok := m.conds[uid]
	if !ok || c.pending == nil {
		return
	}
	if since := c.pending.LastTransitionTime; c.pending.Reason == corev1.PodReasonDeferred && !since.IsZero() {
		m.cfg.Metrics.ObserveDeferredResize(resolution, pod, m.cfg.Clock.Since(since.Time))
	}
	c.pending, c.pod = nil, nil
	m.conds[uid] = c
}
