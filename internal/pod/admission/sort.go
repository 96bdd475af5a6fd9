package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// SortByCreation sorts pods oldest first, keeping the order of pods created
// at the same time, as upstream's HandlePodAdditions orders the pods it
// admits: older pods win a contested resource.
func SortByCreation(pods []*corev1.Pod) {
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		return a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time)
	})
}
