package podsync

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Allocation is the allocation manager (internal/pod/allocation) as a pod's
// sync uses it: the pod runs with its allocation, its actuation is what
// a resize starts from, the PodResizeInProgress condition is the sync's
// to set and clear, and a terminal pod's resize conditions go.
type Allocation interface {
	Allocated(pod *corev1.Pod) *corev1.Pod
	Actuated(uid types.UID) (allocation.PodResources, bool)
	SetActuated(uid types.UID, containers map[string]corev1.ResourceRequirements, pod *corev1.ResourceRequirements, setPod bool) error
	Conditions(uid types.UID) []corev1.PodCondition
	SetInProgress(uid types.UID, reason, message string, generation int64) (int64, bool)
	ClearInProgress(uid types.UID) (int64, bool)
	Terminated(pod *corev1.Pod)
}

// allocated is the pod with its allocation: what it runs with and what
// its status reports.
func (s *Syncer) allocated(pod *corev1.Pod) *corev1.Pod {
	if s.cfg.Allocation == nil {
		return pod
	}
	return s.cfg.Allocation.Allocated(pod)
}

// actuated is what berth last set on the pod's containers and cgroup.
// The first sync of a pod (or of a pod berth started before it recorded
// actuations) records its allocation: its containers were, or are about
// to be, created with it.
func (s *Syncer) actuated(ctx context.Context, pod *corev1.Pod) (map[string]corev1.ResourceRequirements, *corev1.ResourceRequirements) {
	if s.cfg.Allocation == nil {
		return nil, nil
	}
	if a, ok := s.cfg.Allocation.Actuated(pod.UID); ok {
		return a.ContainerResources, a.PodLevelResources
	}
	r := allocation.For(pod)
	if err := s.cfg.Allocation.SetActuated(pod.UID, r.ContainerResources, r.PodLevelResources, true); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to checkpoint actuated resources", "pod", klog.KObj(pod))
	}
	return r.ContainerResources, r.PodLevelResources
}

// resizeProgress sets or clears the PodResizeInProgress condition from
// the plan (upstream's SyncPod before the status): a running container or
// the pod does not have its allocation yet. Clearing it records upstream's
// ResizeCompleted event.
func (s *Syncer) resizeProgress(pod *corev1.Pod, inProgress bool) {
	if s.cfg.Allocation == nil {
		return
	}
	if inProgress {
		s.cfg.Allocation.SetInProgress(pod.UID, "", "", pod.Generation)
		return
	}
	if gen, cleared := s.cfg.Allocation.ClearInProgress(pod.UID); cleared && s.cfg.Recorder != nil {
		s.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, allocation.EventResizeCompleted, "%s",
			allocation.EventMessage(pod, gen, "", allocation.MessageResizeCompleted))
	}
}

// recordActuation keeps what the apply set and reports a failed resize on
// the PodResizeInProgress condition (reason Error) and in a ResizeError
// event, as upstream. It reports whether the pod should be synced again at
// once: a resize was applied; the next plan clears the condition and its
// status shows the runtime's new report.
func (s *Syncer) recordActuation(ctx context.Context, pod *corev1.Pod, plan podplan.Actions, res kuberuntime.Result) (again bool) {
	if s.cfg.Allocation == nil {
		return false
	}
	if len(res.Actuated) > 0 || res.PodActuated {
		if err := s.cfg.Allocation.SetActuated(pod.UID, res.Actuated, pod.Spec.Resources, res.PodActuated); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to checkpoint actuated resources", "pod", klog.KObj(pod))
		}
	}
	if len(plan.Resize.Containers) > 0 && s.cfg.Reinspect != nil {
		// The status reports what the runtime says the containers have.
		s.cfg.Reinspect(pod.UID)
	}
	if res.ResizeErr != nil {
		msg := res.ResizeErr.Error()
		if gen, changed := s.cfg.Allocation.SetInProgress(pod.UID, corev1.PodReasonError, msg, pod.Generation); changed && s.cfg.Recorder != nil {
			s.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, allocation.EventResizeError, "%s",
				allocation.EventMessage(pod, gen, msg, allocation.MessageResizeError))
		}
		return false
	}
	// Sync again at once: the next plan clears PodResizeInProgress, and
	// its status shows what the reinspected runtime reports.
	return plan.Resize.InProgress || len(plan.Resize.Containers) > 0
}

// actuatedResources are what berth last set on each of the pod's
// containers and on its pod cgroup, for its status (the memory request no
// runtime reports; the pod-level resources of a running pod).
func (s *Syncer) actuatedResources(uid types.UID) (map[string]corev1.ResourceRequirements, *corev1.ResourceRequirements) {
	if s.cfg.Allocation == nil {
		return nil, nil
	}
	a, _ := s.cfg.Allocation.Actuated(uid)
	return a.ContainerResources, a.PodLevelResources
}

// terminal tells the allocation manager that the pod's status is
// terminal (upstream's determinePodResizeStatus): its resize conditions,
// which the status no longer shows, are dropped.
func (s *Syncer) terminal(pod *corev1.Pod, status *corev1.PodStatus) {
	if s.cfg.Allocation != nil && podutil.IsTerminal(status.Phase) {
		s.cfg.Allocation.Terminated(pod)
	}
}

// resizeConditions are the pod's resize conditions for its status.
func (s *Syncer) resizeConditions(uid types.UID) []corev1.PodCondition {
	if s.cfg.Allocation == nil {
		return nil
	}
	return s.cfg.Allocation.Conditions(uid)
}

// actuatedPod is the pod as it last ran: its allocation with what berth
// last set overlaid (the start of an in-place resize).
func (s *Syncer) actuatedPod(pod *corev1.Pod) *corev1.Pod {
	if s.cfg.Allocation == nil {
		return pod
	}
	a, ok := s.cfg.Allocation.Actuated(pod.UID)
	if !ok {
		return pod
	}
	out, _ := allocation.Apply(pod, a)
	return out
}
