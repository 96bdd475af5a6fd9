package podstatus

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Termination is why berth itself ends a pod that is neither deleted nor
// finished on its own (a graceful node shutdown, an eviction): the status
// such a pod reports, as upstream's kill functions write it.
type Termination struct {
	// Reason and Message become the pod's status reason and message and
	// the message of its DisruptionTarget condition.
	Reason  string
	Message string
	// NoDisruptionTarget leaves the DisruptionTarget condition out, as
	// upstream's local storage evictions do.
	NoDisruptionTarget bool
	// Failed makes the phase Failed even when the pod's containers all
	// succeeded, as upstream's active deadline does (ShouldEvict in
	// generateAPIPodStatus); a terminal previous phase is still kept.
	Failed bool
}

// DeadlineExceeded is the Termination of a pod past its
// activeDeadlineSeconds (podplan.Deadline.Exceeded), as upstream's
// generateAPIPodStatus writes it: phase Failed, reason DeadlineExceeded,
// upstream's message, no DisruptionTarget condition.
func DeadlineExceeded() *Termination {
	return &Termination{
		Reason: podplan.ReasonDeadlineExceeded, Message: podplan.MessageDeadlineExceeded,
		NoDisruptionTarget: true, Failed: true,
	}
}

// applyTermination sets what upstream's node shutdown and eviction status
// functions set: phase Failed unless the pod already Succeeded, the
// termination's reason and message, and a True DisruptionTarget condition
// with reason TerminationByKubelet (transition time kept while it stays
// True). The phase is decided once, by the first status generated with
// the termination (upstream applies it before the kill): a terminal
// previous phase is kept, so containers that exit 0 on SIGTERM do not turn
// a Failed pod Succeeded.
func applyTermination(s *corev1.PodStatus, t *Termination, pod *corev1.Pod, old *corev1.PodStatus, now metav1.Time) {
	switch {
	case podutil.IsTerminal(old.Phase):
		s.Phase = old.Phase
	case t.Failed || s.Phase != corev1.PodSucceeded:
		s.Phase = corev1.PodFailed
	}
	s.Reason, s.Message = t.Reason, t.Message
	if t.NoDisruptionTarget {
		return
	}
	c := corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation,
		Reason: corev1.PodReasonTerminationByKubelet, Message: t.Message, LastTransitionTime: now,
	}
	if prev := findCondition(old.Conditions, corev1.DisruptionTarget); prev != nil && prev.Status == corev1.ConditionTrue {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	for i := range s.Conditions {
		if s.Conditions[i].Type == corev1.DisruptionTarget {
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}
