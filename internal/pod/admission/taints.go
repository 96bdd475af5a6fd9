package admission

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// untoleratedNoExecute reports whether the node has a NoExecute taint that
// none of the pod's tolerations tolerates. The kubelet looks at no other
// effect: NoSchedule is the scheduler's business.
//
// Matching is the API's own Toleration.ToleratesTaint: an empty effect
// matches every effect, an empty key with Exists matches every key, Exists
// matches every value, Equal (or no operator) the same value, and Lt and Gt
// compare integers. Lt and Gt are taken as enabled: the API server only
// keeps them in a pod when its TaintTolerationComparisonOperators gate is on.
func untoleratedNoExecute(pod *corev1.Pod, node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerated(pod.Spec.Tolerations, taint) {
			return true
		}
	}
	return false
}

func tolerated(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		// The logger only hears of values Lt and Gt cannot parse; such a
		// toleration simply does not match.
		if tolerations[i].ToleratesTaint(klog.Logger{}, taint, true) {
			return true
		}
	}
	return false
}
