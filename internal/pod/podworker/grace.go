package podworker

import corev1 "k8s.io/api/core/v1"

// minGracePeriod is the shortest grace period berth ever asks for: even a
// force kill (grace 0) gives processes one second.
const minGracePeriod = 1

// effectiveGracePeriod returns the grace period for terminating pod, given
// the one already in force (prev, 0 before termination was requested) and a
// kill's requested override. It is pure.
//
// As upstream: the grace period can only shrink once set. The pod's
// DeletionGracePeriodSeconds (computed by the API server) and a kill's
// override each replace the current value when it is unset or they are
// shorter. The pod's spec.terminationGracePeriodSeconds is only the default
// when neither is given and nothing is in force yet: a deletion that asks
// for longer than the spec is honoured. The result is at least 1 second.
//
// shortened reports whether a grace period already in force changed (it can
// only have gone down), which must reach a SyncTerminatingPod in flight.
func effectiveGracePeriod(prev int64, pod *corev1.Pod, override *int64) (grace int64, shortened bool) {
	grace = prev
	overridden := false
	lower := func(v *int64) {
		if v != nil && (grace == 0 || *v < grace) {
			grace = *v
			overridden = true
		}
	}
	if pod != nil {
		lower(pod.DeletionGracePeriodSeconds)
	}
	lower(override)
	if !overridden && grace == 0 && pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace < minGracePeriod {
		grace = minGracePeriod
	}
	return grace, prev != 0 && grace != prev
}
