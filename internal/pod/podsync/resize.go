package podsync

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/kuberuntime"
	"github.com/berthk8s/berth/internal/pod/podplan"
)

// Allocation is the allocation manager (internal/pod/allocation) as a pod's
// sync uses it: one read of the pod's allocation, actuation and resize
// conditions for the sync's snapshot, and one call that records what the
// sync decided and applied (the actuation, the PodResizeInProgress
// condition the plan sets or clears, a terminal pod's resize conditions
// going) and returns what is held afterwards. A pod gone for good is
// forgotten through the pod-gone route (internal/pod/podgone), not here.
type Allocation interface {
	Snapshot(pod *corev1.Pod) allocation.PodSnapshot
	Record(ctx context.Context, pod *corev1.Pod, r allocation.SyncRecord) allocation.PodSnapshot
}

var _ Allocation = (*allocation.Manager)(nil)

// recordAllocation tells the allocation manager one step of the sync and keeps in
// the snapshot what it holds afterwards, for the status generated next.
func (s *Syncer) recordAllocation(ctx context.Context, snap *snapshot, r allocation.SyncRecord) {
	if s.cfg.Allocation == nil {
		return
	}
	snap.alloc = s.cfg.Allocation.Record(ctx, snap.pod, r)
}

// resizeProgress records, before the status, what the plan says of the
// resize (upstream's SyncPod sets or clears PodResizeInProgress there; a
// clear records ResizeCompleted). The first sync of a pod (or of a pod
// berth started before it recorded actuations) records its allocation as
// its actuation: its containers were, or are about to be, created with
// it; the snapshot already shows it so (firstActuation).
func (s *Syncer) resizeProgress(ctx context.Context, snap *snapshot, first bool, plan podplan.Actions) {
	r := allocation.SyncRecord{Progress: allocation.ProgressDone}
	if plan.Resize.InProgress {
		r.Progress = allocation.ProgressResizing
	}
	if first {
		r.Actuated, r.PodActuated = snap.alloc.Actuated.ContainerResources, true
	}
	s.recordAllocation(ctx, snap, r)
}

// firstActuation makes a pod with no recorded actuation count as running
// with its allocation, for the plan and the status; resizeProgress records
// it. It reports whether it did.
func (s *Syncer) firstActuation(snap *snapshot) bool {
	if s.cfg.Allocation == nil || snap.alloc.Recorded {
		return false
	}
	snap.alloc.Actuated = allocation.For(snap.pod)
	return true
}

// recordActuation records what the apply set and a failed resize (the
// PodResizeInProgress condition with reason Error and a ResizeError
// event, as upstream). It reports whether the pod should be synced again
// at once: a resize was applied; the next plan clears the condition and
// its status shows the runtime's new report.
func (s *Syncer) recordActuation(ctx context.Context, snap *snapshot, plan podplan.Actions, res kuberuntime.Result) (again bool) {
	if s.cfg.Allocation == nil {
		return false
	}
	r := allocation.SyncRecord{Actuated: res.Actuated, PodActuated: res.PodActuated}
	if res.ResizeErr != nil {
		r.ResizeError = res.ResizeErr.Error()
	}
	s.recordAllocation(ctx, snap, r)
	if len(plan.Resize.Containers) > 0 && s.cfg.Reinspect != nil {
		// The status reports what the runtime says the containers have.
		s.cfg.Reinspect(snap.pod.UID)
	}
	if res.ResizeErr != nil {
		return false
	}
	// Sync again at once: the next plan clears PodResizeInProgress, and
	// its status shows what the reinspected runtime reports.
	return plan.Resize.InProgress || len(plan.Resize.Containers) > 0
}

// actuatedPod is the pod as it last ran: its allocation with what berth
// last set overlaid (the start of an in-place resize).
func actuatedPod(snap *snapshot) *corev1.Pod {
	if !snap.alloc.Recorded {
		return snap.pod
	}
	out, _ := allocation.Apply(snap.pod, snap.alloc.Actuated)
	return out
}
