package podstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// phaseCounts tallies container statuses the way upstream getPhase does.
type phaseCounts struct {
	pendingInit, pendingSidecar, failedInitNotRestartable                int
	unknown, running, waiting, stopped, stoppedNotRestartable, succeeded int
}

// phase is upstream getPhase (with per-container restart policies):
//
//   - Failed: a regular init container failed and will not be restarted.
//   - Pending: a regular init container has not succeeded yet, a sidecar has
//     not started (unless the pod was initialized before), or a regular
//     container waits without ever having run.
//   - Running: every container was started and one runs.
//   - all stopped: Succeeded/Failed when terminal (not for static pods) or
//     when none will be restarted; Running while some will restart.
//   - Pending otherwise (some status unknown).
func phase(pod *corev1.Pod, statuses []corev1.ContainerStatus, podIsTerminal, podHasInitialized bool) corev1.PodPhase {
	var n phaseCounts
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		s, ok := statusByName(statuses, c.Name)
		if podutil.IsSidecar(c) {
			n.addSidecar(s, ok)
		} else {
			n.addInit(&pod.Spec, c, s, ok)
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		s, ok := statusByName(statuses, c.Name)
		n.addRegular(&pod.Spec, c, s, ok)
	}

	switch {
	case n.failedInitNotRestartable > 0:
		return corev1.PodFailed
	case n.pendingInit > 0 || (n.pendingSidecar > 0 && !podHasInitialized) || n.waiting > 0:
		return corev1.PodPending
	case n.running > 0 && n.unknown == 0:
		return corev1.PodRunning
	case n.running == 0 && n.stopped > 0 && n.unknown == 0:
		if (podIsTerminal && !podutil.IsStatic(pod)) || n.stopped == n.stoppedNotRestartable {
			if n.stopped == n.succeeded {
				return corev1.PodSucceeded
			}
			return corev1.PodFailed
		}
		// Some are restarting.
		return corev1.PodRunning
	}
	return corev1.PodPending
}

func (n *phaseCounts) addInit(spec *corev1.PodSpec, c *corev1.Container, s *corev1.ContainerStatus, ok bool) {
	if !ok {
		n.pendingInit++
		return
	}
	failed := func(t *corev1.ContainerStateTerminated) {
		if t.ExitCode != 0 && !restartable(spec, c, t) {
			n.failedInitNotRestartable++
		}
	}
	switch {
	case s.State.Running != nil:
		n.pendingInit++
	case s.State.Terminated != nil:
		failed(s.State.Terminated)
	case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
		failed(s.LastTerminationState.Terminated)
	default:
		n.pendingInit++
	}
}

func (n *phaseCounts) addSidecar(s *corev1.ContainerStatus, ok bool) {
	if !ok {
		n.unknown++
		return
	}
	switch {
	case s.State.Running != nil:
		if s.Started == nil || !*s.Started {
			n.pendingSidecar++
		}
		n.running++
	case s.State.Terminated != nil:
		// Stopped sidecars do not count towards the phase.
	case s.State.Waiting != nil:
		if s.LastTerminationState.Terminated == nil {
			n.pendingSidecar++
			n.waiting++
		}
	default:
		n.pendingSidecar++
		n.unknown++
	}
}

func (n *phaseCounts) addRegular(spec *corev1.PodSpec, c *corev1.Container, s *corev1.ContainerStatus, ok bool) {
	if !ok {
		n.unknown++
		return
	}
	stopped := func(t *corev1.ContainerStateTerminated) {
		n.stopped++
		if !restartable(spec, c, t) {
			n.stoppedNotRestartable++
		}
	}
	switch {
	case s.State.Running != nil:
		n.running++
	case s.State.Terminated != nil:
		stopped(s.State.Terminated)
		if s.State.Terminated.ExitCode == 0 {
			n.succeeded++
		}
	case s.State.Waiting != nil:
		if s.LastTerminationState.Terminated != nil {
			stopped(s.LastTerminationState.Terminated)
		} else {
			n.waiting++
		}
	default:
		n.unknown++
	}
}

// restartable reports whether a container that ended as t is started
// again: its restart rules and policies say so (podutil), or a
// RestartAllContainers reset removed it (it starts with the pod).
func restartable(spec *corev1.PodSpec, c *corev1.Container, t *corev1.ContainerStateTerminated) bool {
	return t.Reason == ReasonRestartingAllContainers || podutil.ContainerShouldRestart(c, spec, t.ExitCode)
}
