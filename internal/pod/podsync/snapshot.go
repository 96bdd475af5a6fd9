package podsync

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// snapshot is what one sync of a pod reads of the world, read once when
// the sync observes the pod: the planner and the status generator both
// take it, so they see the same pod, runtime state, probe results,
// previous status, actuation and time. It belongs to the one call that
// took it.
type snapshot struct {
	// pod is the pod with its allocation (the pod itself without an
	// allocation manager).
	pod *corev1.Pod
	rt  *runtimestate.Pod
	// probes are the prober's results (none without a prober).
	probes prober.Snapshot
	// previous is the pod's last generated status, else the one it came
	// with.
	previous *corev1.PodStatus
	// alloc is the pod's actuation and resize conditions (zero without an
	// allocation manager); the sync's records replace it with what the
	// manager holds afterwards (recordAllocation).
	alloc allocation.PodSnapshot
	now   time.Time
}

// snapshot reads the clock, the status store, the allocation manager and
// the prober once each.
func (s *Syncer) snapshot(pod *corev1.Pod, rt *runtimestate.Pod) snapshot {
	snap := snapshot{pod: pod, rt: rt, previous: s.previous(pod), now: s.cfg.Clock.Now()}
	if s.cfg.Allocation != nil {
		snap.alloc = s.cfg.Allocation.Snapshot(pod)
		snap.pod = snap.alloc.Pod
	}
	snap.probes = s.probes(snap.pod, rt)
	return snap
}

// planInputs is the planner's view of the snapshot, with the pod's
// CrashLoopBackOff entries from its record.
func (s *Syncer) planInputs(snap *snapshot, crash map[string]podplan.BackoffEntry) podplan.Inputs {
	return podplan.Inputs{
		Pod: snap.pod, Runtime: snap.rt, Backoff: crash, Probes: snap.probes.Plan,
		Now: snap.now, Policy: s.cfg.Backoff,
		RestartingAll: podutil.RestartingAll(snap.previous),
		StartTime:     startTime(snap.previous, snap.now), PreviousPhase: snap.previous.Phase,
		Actuated: snap.alloc.Actuated.ContainerResources, ActuatedPod: snap.alloc.Actuated.PodLevelResources,
	}
}

// resourceHealth is the health of the devices of each of the pod's
// regular containers that has some (nil without a device manager).
func (s *Syncer) resourceHealth(pod *corev1.Pod) map[string][]corev1.ResourceStatus {
	if s.cfg.Health.Devices == nil {
		return nil
	}
	var out map[string][]corev1.ResourceStatus
	for _, c := range pod.Spec.Containers {
		if h := s.cfg.Health.Devices.ResourceHealth(string(pod.UID), c.Name); len(h) > 0 {
			if out == nil {
				out = map[string][]corev1.ResourceStatus{}
			}
			out[c.Name] = h
		}
	}
	return out
}

// claimHealth is the health of the devices of the claims of each of the
// pod's regular containers that names some (nil without a DRA manager);
// upstream gives init containers none.
func (s *Syncer) claimHealth(pod *corev1.Pod) map[string][]corev1.ResourceStatus {
	if s.cfg.Health.Claims == nil {
		return nil
	}
	var out map[string][]corev1.ResourceStatus
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if h := s.cfg.Health.Claims.ClaimHealth(pod, c); len(h) > 0 {
			if out == nil {
				out = map[string][]corev1.ResourceStatus{}
			}
			out[c.Name] = h
		}
	}
	return out
}

// previous is the pod's last generated status, else the status the pod
// came with (an API pod's, after a restart of berth): what the status
// generator starts from.
func (s *Syncer) previous(pod *corev1.Pod) *corev1.PodStatus {
	if st, ok := s.cfg.Statuses.Get(pod.UID); ok {
		return &st
	}
	return &pod.Status
}

// generate computes the pod's status from the snapshot and stores it;
// restartAll is the plan's (none outside SyncPod); terminal says the pod
// worker has finished the pod. A terminal status drops the pod's resize
// conditions from its allocation (upstream's determinePodResizeStatus).
func (s *Syncer) generate(ctx context.Context, snap *snapshot, failures map[string]runtimestate.StartFailure, restartAll podplan.RestartAll, terminal bool) corev1.PodStatus {
	status := podstatus.Generate(podstatus.Input{
		Pod:         snap.pod,
		Runtime:     snap.rt,
		Previous:    snap.previous,
		Failures:    failures,
		RestartAll:  restartAll,
		Readiness:   snap.probes.Readiness,
		Startup:     snap.probes.Startup,
		Terminal:    terminal,
		Termination: s.termination(snap.pod.UID),
		Wait:        s.wait(snap.pod.UID),
		HostIPs:     s.cfg.HostIPs,
		RuntimeName: s.cfg.RuntimeName,
		Now:         snap.now,
		Resize:      snap.alloc.Conditions,
		Actuated:    snap.alloc.Actuated.ContainerResources, ActuatedPod: snap.alloc.Actuated.PodLevelResources,
		ResourceHealth: s.resourceHealth(snap.pod),
		ClaimHealth:    s.claimHealth(snap.pod),
	})
	if podutil.IsTerminal(status.Phase) {
		s.recordAllocation(ctx, snap, allocation.SyncRecord{Terminal: true})
	}
	s.cfg.Statuses.Set(snap.pod.UID, status)
	return status
}
