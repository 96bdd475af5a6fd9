package volume

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/downward"
)

// fieldValue returns the content of a downward API fieldRef file. Volumes
// may reference metadata only, as upstream.
func fieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	if v, ok := downward.Metadata(pod, fieldPath); ok {
		return v, nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", fieldPath)
}

// resourceValue returns the content of a downward API resourceFieldRef
// file; a volume's reference must name its container.
func resourceValue(pod *corev1.Pod, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	return downward.Resource(pod, nil, ref, allocatable)
}
