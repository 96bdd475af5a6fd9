package downward

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Metadata returns the value of a metadata fieldRef: metadata.name,
// namespace, uid, labels, annotations, labels['k'] and annotations['k'].
// ok is false for any other path.
func Metadata(pod *corev1.Pod, path string) (value string, ok bool) {
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	case "metadata.labels":
		return FormatMap(pod.Labels), true
	case "metadata.annotations":
		return FormatMap(pod.Annotations), true
	}
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], true
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], true
	}
	return "", false
}

// subscript parses "<prefix>['key']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// FormatMap renders labels or annotations as upstream's downward API does:
// key="value" lines sorted by key.
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

// Resource returns the value of a resourceFieldRef (upstream
// containerResourceRuntimeValue): the limit or request of the container
// the reference names (c when it names none), divided by the divisor and
// rounded up. A cpu, memory, ephemeral-storage or hugepages limit the
// container does not set is the node's allocatable.
func Resource(pod *corev1.Pod, c *corev1.Container, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	if ref.ContainerName != "" {
		if c = container(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("container %s not found", ref.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resource %s names no container", ref.Resource)
	}
	kind, rest, _ := strings.Cut(ref.Resource, ".")
	name := corev1.ResourceName(rest)
	cpu, binary := name == corev1.ResourceCPU, name == corev1.ResourceMemory ||
		name == corev1.ResourceEphemeralStorage || strings.HasPrefix(rest, corev1.ResourceHugePagesPrefix)
	if (kind != "limits" && kind != "requests") || (!cpu && !binary) {
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	q := c.Resources.Requests[name]
	if kind == "limits" {
		var set bool
		if q, set = c.Resources.Limits[name]; !set {
			q = allocatable[name]
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if cpu {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// container returns the container or init container of that name.
func container(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
