package podutil

import corev1 "k8s.io/api/core/v1"

// SystemCriticalPriority is upstream's scheduling.SystemCriticalPriority:
// pods of this priority or above are critical.
const SystemCriticalPriority = 2 * 1000000000

// IsCritical is upstream's kubelettypes.IsCriticalPod: static and mirror
// pods, and pods of system-critical priority. The eviction manager never
// evicts them and admits them under any pressure; their containers get no
// swap and, of the system-node-critical class, the lowest OOM score.
func IsCritical(pod *corev1.Pod) bool {
	if IsStatic(pod) || IsMirror(pod) {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= SystemCriticalPriority
}
