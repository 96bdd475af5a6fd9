package podstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Terminated is the final status of a pod whose worker has stopped every
// container, as upstream's status manager TerminatePod makes it: a
// container still shown waiting is reported terminated with exit code 137
// and reason ContainerStatusUnknown, since berth cannot know how it would
// have ended, and a pod that is not in a terminal phase becomes Failed.
// Which containers: the regular ones only once the pod has initialized
// (hasInitialized: one of them ever left waiting, or the last init
// container completed, or runs started as a sidecar), since a regular
// container that waited for the init containers never had a chance to
// run and stays waiting; and the init containers up to the last one that
// attempted to start (at least the first). Static pods keep their phase,
// as upstream. The input is not modified.
func Terminated(spec *corev1.PodSpec, status corev1.PodStatus, static bool) corev1.PodStatus {
	out := *status.DeepCopy()
	if hasInitialized(spec, &status) {
		markUnknown(out.ContainerStatuses)
	}
	markUnknown(attemptedPrefix(out.InitContainerStatuses))
	if !static && !podutil.IsTerminal(out.Phase) {
		out.Phase = corev1.PodFailed
	}
	return out
}

// markUnknown reports every container of list that is not terminated as
// terminated, state unknown.
func markUnknown(list []corev1.ContainerStatus) {
	for i := range list {
		if list[i].State.Terminated != nil {
			continue
		}
		list[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137,
			Reason:   "ContainerStatusUnknown",
			Message:  "The container could not be located when the pod was terminated",
		}}
		list[i].Ready = false
		list[i].Started = ptrFalse()
	}
}

// hasInitialized reports whether the status shows that the pod got past its
// init containers (upstream's hasPodInitialized): it has none, a regular
// container ever left waiting, or the last init container completed (now
// or before) or, if a sidecar, runs and has started.
func hasInitialized(spec *corev1.PodSpec, status *corev1.PodStatus) bool {
	if len(spec.InitContainers) == 0 {
		return true
	}
	for _, s := range status.ContainerStatuses {
		if s.LastTerminationState.Terminated != nil || s.State.Waiting == nil {
			return true
		}
	}
	n := len(status.InitContainerStatuses)
	if n == 0 {
		return false
	}
	last := status.InitContainerStatuses[n-1]
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.Name != last.Name {
			continue
		}
		if podutil.IsSidecarIn(spec, c) {
			return last.State.Running != nil && last.Started != nil && *last.Started
		}
		return completed(last.State) || completed(last.LastTerminationState)
	}
	return false
}

func completed(s corev1.ContainerState) bool {
	return s.Terminated != nil && s.Terminated.ExitCode == 0
}

// attemptedPrefix returns the statuses up to the last one that is not
// waiting or has terminated before: the init containers that attempted to
// start; the first one if none did (upstream's initializedContainers).
func attemptedPrefix(list []corev1.ContainerStatus) []corev1.ContainerStatus {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].State.Waiting == nil || list[i].LastTerminationState.Terminated != nil {
			return list[:i+1]
		}
	}
	if len(list) > 0 {
		return list[:1]
	}
	return nil
}

func ptrFalse() *bool { f := false; return &f }
