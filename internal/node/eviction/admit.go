package eviction

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Admit decides whether a pod may start under the node conditions conds,
// as upstream's eviction manager Admit: critical pods always; under
// memory pressure alone, pods that are not BestEffort, and BestEffort
// pods tolerating the memory-pressure taint; under any other pressure,
// none. The reason of a refusal is Reason, its message AdmitMessage.
func Admit(pod *corev1.Pod, conds []corev1.NodeConditionType) (ok bool, message string) {
	if len(conds) == 0 || podutil.IsCritical(pod) {
		return true, ""
	}
	if len(conds) == 1 && slices.Contains(conds, corev1.NodeMemoryPressure) {
		if podutil.QOSClass(pod) != corev1.PodQOSBestEffort {
			return true, ""
		}
		taint := &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}
		if corev1helpers.TolerationsTolerateTaint(klog.Logger{}, pod.Spec.Tolerations, taint, false) {
			return true, ""
		}
	}
	return false, AdmitMessage(conds)
}
