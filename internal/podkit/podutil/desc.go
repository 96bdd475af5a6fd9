package podutil

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Desc names a pod in messages as upstream's format.Pod does:
// name_namespace(uid). Events and errors that upstream words with it use
// this one.
func Desc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
