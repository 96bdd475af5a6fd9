package podutil

import corev1 "k8s.io/api/core/v1"

// kubeletConditions are the pod conditions the kubelet owns: it computes
// them and overwrites whatever the API holds (upstream's
// PodConditionsByKubelet, plus the ones its feature gates add, all on by
// default in v1.37: PodReadyToStartContainers and AllContainersRestarting).
var kubeletConditions = []corev1.PodConditionType{
	corev1.PodScheduled,
	corev1.PodReady,
	corev1.PodInitialized,
	corev1.ContainersReady,
	corev1.PodResizeInProgress,
	corev1.PodResizePending,
	corev1.PodReadyToStartContainers,
	corev1.AllContainersRestarting,
}

// OwnedByKubelet reports whether the kubelet owns pod conditions of type t
// (upstream's PodConditionByKubelet).
func OwnedByKubelet(t corev1.PodConditionType) bool {
	for _, c := range kubeletConditions {
		if c == t {
			return true
		}
	}
	return false
}

// SharedWithKubelet reports whether the kubelet shares pod conditions of
// type t with other writers: it adds or replaces its own but keeps theirs
// (upstream's PodConditionSharedByKubelet: DisruptionTarget).
func SharedWithKubelet(t corev1.PodConditionType) bool {
	return t == corev1.DisruptionTarget
}
