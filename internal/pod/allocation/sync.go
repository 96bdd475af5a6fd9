package allocation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// PodSnapshot is what a pod's sync reads of the pod's allocation, in one
// call (Manager.Snapshot), and what it holds after the sync recorded
// something (Manager.Record). It is a value the caller owns; Pod may be
// the pod the caller gave (when its spec is at its allocation) and is not
// to be modified.
type PodSnapshot struct {
	// Pod is the pod with its allocation in place of its spec's resources
	// (Allocated): what it runs with and what its status reports.
	Pod *corev1.Pod
	// Actuated is what berth last set on the pod's containers and pod
	// cgroup; Recorded is false when nothing is recorded yet.
	Actuated PodResources
	Recorded bool
	// Conditions are the pod's resize conditions, PodResizePending then
	// PodResizeInProgress, as the status shows them.
	Conditions []corev1.PodCondition
}

// Snapshot returns the pod with its allocation, its actuation and its
// resize conditions.
func (m *Manager) Snapshot(pod *corev1.Pod) PodSnapshot {
	a, ok := m.Actuated(pod.UID)
	return PodSnapshot{Pod: m.Allocated(pod), Actuated: a, Recorded: ok, Conditions: m.Conditions(pod.UID)}
}

// Progress is where a pod's in-place resize is, as its sync's plan says
// (podplan.Resize.InProgress).
type Progress int

const (
	// ProgressUnchanged leaves the PodResizeInProgress condition as it is.
	ProgressUnchanged Progress = iota
	// ProgressResizing: a running container or the pod cgroup does not
	// have its allocation yet; PodResizeInProgress is set (kept as it is
	// when present).
	ProgressResizing
	// ProgressDone: everything has its allocation; PodResizeInProgress
	// goes, with upstream's ResizeCompleted event when it was there.
	ProgressDone
)

// SyncRecord is what one step of a pod's sync tells the pod's
// allocation; the zero value records nothing. Record only reads it.
type SyncRecord struct {
	// Actuated are the resources the runtime set on the named containers;
	// PodActuated says the pod cgroup was set to the pod's spec.resources.
	Actuated    map[string]corev1.ResourceRequirements
	PodActuated bool
	// Progress is the plan's resize progress.
	Progress Progress
	// ResizeError is why the apply's resize failed ("" when it did not):
	// PodResizeInProgress takes reason Error and this message, with a
	// ResizeError event when it changed, as upstream.
	ResizeError string
	// Terminal says the pod's status is terminal: its resize conditions go
	// (Terminated).
	Terminal bool
}

// Record records one step of a pod's sync (pod with its allocation) and
// returns what the allocation holds for the pod afterwards. The resize
// events are recorded here, as upstream's SyncPod records them.
func (m *Manager) Record(ctx context.Context, pod *corev1.Pod, r SyncRecord) PodSnapshot {
	if len(r.Actuated) > 0 || r.PodActuated {
		if err := m.SetActuated(pod.UID, r.Actuated, pod.Spec.Resources, r.PodActuated); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to checkpoint actuated resources", "pod", klog.KObj(pod))
		}
	}
	switch r.Progress {
	case ProgressResizing:
		m.SetInProgress(pod.UID, "", "", pod.Generation)
	case ProgressDone:
		if gen, cleared := m.ClearInProgress(pod.UID); cleared {
			m.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, EventResizeCompleted, "%s",
				EventMessage(pod, gen, "", MessageResizeCompleted))
		}
	}
	if r.ResizeError != "" {
		if gen, changed := m.SetInProgress(pod.UID, corev1.PodReasonError, r.ResizeError, pod.Generation); changed {
			m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, EventResizeError, "%s",
				EventMessage(pod, gen, r.ResizeError, MessageResizeError))
		}
	}
	if r.Terminal {
		m.Terminated(pod)
	}
	a, ok := m.Actuated(pod.UID)
	return PodSnapshot{Pod: pod, Actuated: a, Recorded: ok, Conditions: m.Conditions(pod.UID)}
}
