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
	return strconv.FormatInt(ceilInt64(units(q, cpu)/units(divisor, cpu)), 10), nil
}

// units is float64(q.MilliValue()) for cpu, float64(q.Value()) otherwise,
// as upstream divides them; a quantity beyond the int64 range, where
// those wrap around, is taken as the nearest float instead.
func units(q resource.Quantity, milli bool) float64 {
	limit, scale := resource.NewQuantity(math.MaxInt64, resource.DecimalSI), 1.0
	if milli {
		limit, scale = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI), 1000
	}
	abs := q.DeepCopy()
	if abs.Sign() < 0 {
		abs.Neg()
	}
	if abs.Cmp(*limit) > 0 {
		return q.AsApproximateFloat64() * scale
	}
	if milli {
		return float64(q.MilliValue())
	}
	return float64(q.Value())
}

// ceilInt64 is upstream's int64(math.Ceil(x)) held to the int64 range: a
// quantity of 8Ei or more (float64(MaxInt64) is 2^63) would otherwise wrap
// to a negative number. 0/0 (a divisor that rounds to zero) gives 0.
func ceilInt64(x float64) int64 {
	c := math.Ceil(x)
	switch {
	case math.IsNaN(c):
		return 0
	case c >= math.MaxInt64:
		return math.MaxInt64
	case c <= math.MinInt64:
		return math.MinInt64
	}
	return int64(c)
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
