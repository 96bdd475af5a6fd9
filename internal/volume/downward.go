package volume

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FormatMap renders labels or annotations as upstream's downward API does:
// one key="value" line per entry (value quoted as Go does), sorted by key,
// no trailing newline.
func FormatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// fieldValue returns the content of a downward API fieldRef file. Volumes
// may reference metadata only, as upstream.
func fieldValue(pod *corev1.Pod, fieldPath string) (string, error) {
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return FormatMap(pod.Labels), nil
	case "metadata.annotations":
		return FormatMap(pod.Annotations), nil
	}
	if key, ok := subscript(fieldPath, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(fieldPath, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", fieldPath)
}

// subscript parses "<prefix>['key']".
func subscript(fieldPath, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(fieldPath, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// resourceValue returns the content of a downward API resourceFieldRef
// file: the container's limit or request divided by the divisor and rounded
// up. A limit the container does not set is the node's allocatable, as
// upstream.
func resourceValue(pod *corev1.Pod, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	c := findContainer(pod, ref.ContainerName)
	if c == nil {
		return "", fmt.Errorf("container %q not found in pod", ref.ContainerName)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
	}
	var q resource.Quantity
	switch kind {
	case "limits":
		var set bool
		q, set = c.Resources.Limits[corev1.ResourceName(name)]
		if !set {
			q = allocatable[corev1.ResourceName(name)]
		}
	case "requests":
		q = c.Resources.Requests[corev1.ResourceName(name)]
	default:
		return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU:
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
	}
	return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
