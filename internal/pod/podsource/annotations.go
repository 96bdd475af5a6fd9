package podsource

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// localAnnotations are the annotations berth itself manages. They are
// ignored when the merger decides whether a pod changed, and kept from the
// stored pod when it updates one.
var localAnnotations = [...]string{podutil.ConfigSourceAnnotation, podutil.ConfigMirrorAnnotation, podutil.ConfigSeenAnnotation}

// GetPodFullName returns "<name>_<namespace>", the name that is unique
// among a node's pods across all sources.
func GetPodFullName(pod *corev1.Pod) string {
	return pod.Name + "_" + pod.Namespace
}
