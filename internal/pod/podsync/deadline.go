package podsync

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podstatus"
)

// deadlineExceeded ends a pod past its activeDeadlineSeconds, as
// upstream's active deadline handler: every status from now on says
// DeadlineExceeded (the pod is Failed and its worker terminates it), and a
// Normal event says so, once.
func (s *Syncer) deadlineExceeded(pod *corev1.Pod) {
	if s.termination(pod.UID) != nil {
		return
	}
	t := podstatus.DeadlineExceeded()
	s.setTermination(pod.UID, t)
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, t.Reason, "%s", t.Message)
	}
}

// startTime is the startTime of the status this sync generates: the
// previous status's, else now (podstatus.Generate stamps a pod that has
// none with the time of its first status), so the first sync already
// knows the pod's deadline and wakes the worker for it.
func startTime(prev *corev1.PodStatus, now time.Time) time.Time {
	if prev.StartTime == nil || prev.StartTime.IsZero() {
		return now
	}
	return prev.StartTime.Time
}
