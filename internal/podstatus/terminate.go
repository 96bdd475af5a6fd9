package podstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podutil"
)

// Terminated is the final status of a pod whose worker has stopped every
// container, as upstream's status manager TerminatePod makes it: a
// container still shown waiting (it never ran, or its state is unknown) is
// reported terminated with exit code 137 and reason ContainerStatusUnknown,
// since berth cannot know how it would have ended, and a pod that is not in
// a terminal phase becomes Failed. Static pods keep their phase, as
// upstream. The input is not modified.
func Terminated(status corev1.PodStatus, static bool) corev1.PodStatus {
	out := *status.DeepCopy()
	for _, list := range [][]corev1.ContainerStatus{out.InitContainerStatuses, out.ContainerStatuses} {
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
	if !static && !podutil.IsTerminal(out.Phase) {
		out.Phase = corev1.PodFailed
	}
	return out
}

func ptrFalse() *bool { f := false; return &f }
