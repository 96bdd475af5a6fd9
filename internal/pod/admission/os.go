package admission

import (
	"fmt"
	"runtime"

	corev1 "k8s.io/api/core/v1"
)

// checkOS makes upstream's first checks, which no preemption could help:
// the pod's kubernetes.io/os label, its spec.os, and a Strict supplemental
// groups policy on a node that does not support it (only with a node).
func checkOS(pod *corev1.Pod, node *corev1.Node) Result {
	// Upstream compares with the node's label, which it first forces to the
	// kubelet's own OS: the comparison is with runtime.GOOS.
	if os, ok := pod.Labels[corev1.LabelOSStable]; ok && os != runtime.GOOS {
		return Result{
			Reason:  ReasonPodOSSelectorNodeLabelDoesNotMatch,
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
		}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != runtime.GOOS {
		return Result{
			Reason:  ReasonPodOSNotSupported,
			Message: "Failed to admit pod as the OS field doesn't match node OS",
		}
	}
	if node != nil && strictGroupsUnsupported(pod, node) {
		return Result{
			Reason:  ReasonSupplementalGroupsPolicyNotSupported,
			Message: fmt.Sprintf("SupplementalGroupsPolicy=%s is not supported in this node", corev1.SupplementalGroupsPolicyStrict),
		}
	}
	return admitted
}

// strictGroupsUnsupported reports whether pod asks for the Strict
// supplemental groups policy and the node's status does not announce it.
func strictGroupsUnsupported(pod *corev1.Pod, node *corev1.Node) bool {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil || *sc.SupplementalGroupsPolicy != corev1.SupplementalGroupsPolicyStrict {
		return false
	}
	f := node.Status.Features
	return f == nil || f.SupplementalGroupsPolicy == nil || !*f.SupplementalGroupsPolicy
}
