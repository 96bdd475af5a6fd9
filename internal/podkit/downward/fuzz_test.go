package downward

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzMetadata: resolving any fieldRef path never panics; it resolves
// exactly the five metadata fields and the labels['k'] and
// annotations['k'] subscripts, and a subscript gives that key's value.
func FuzzMetadata(f *testing.F) {
	f.Fuzz(func(t *testing.T, path, key, value string) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u",
			Labels: map[string]string{key: value}, Annotations: map[string]string{key: value + "!"}}}
		got, ok := Metadata(pod, path)
		want, wantOK := metadataOracle(pod, path)
		if got != want || ok != wantOK {
			t.Fatalf("Metadata(%q) = %q, %v; want %q, %v", path, got, ok, want, wantOK)
		}
		for prefix, v := range map[string]string{"metadata.labels": value, "metadata.annotations": value + "!"} {
			if got, ok := Metadata(pod, prefix+"['"+key+"']"); !ok || got != v {
				t.Fatalf("Metadata(%s[%q]) = %q, %v; want %q", prefix, key, got, ok, v)
			}
		}
	})
}

// metadataOracle is what upstream's fieldpath.ExtractFieldPathAsString
// does for the metadata paths a downward API volume allows.
func metadataOracle(pod *corev1.Pod, path string) (string, bool) {
	if strings.HasSuffix(path, "']") {
		base, key, ok := strings.Cut(strings.TrimSuffix(path, "']"), "['")
		switch {
		case ok && base == "metadata.labels":
			return pod.Labels[key], true
		case ok && base == "metadata.annotations":
			return pod.Annotations[key], true
		}
	}
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
	return "", false
}

// FuzzResource: resolving any resourceFieldRef never panics; it accepts
// only limits.* and requests.* of cpu, memory, ephemeral-storage and
// hugepages-*, answers a decimal integer, and a non-negative quantity over
// a positive divisor gives a non-negative answer.
func FuzzResource(f *testing.F) {
	f.Fuzz(func(t *testing.T, res, divisor, request, limit, allocatable string) {
		name := corev1.ResourceName(res[strings.IndexByte(res, '.')+1:])
		c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: quantities(name, request), Limits: quantities(name, limit)}}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
		ref := &corev1.ResourceFieldSelector{ContainerName: "c", Resource: res}
		if d, err := resource.ParseQuantity(divisor); err == nil {
			ref.Divisor = d
		}
		got, err := Resource(pod, nil, ref, quantities(name, allocatable))
		if err != nil {
			return
		}
		kind, rest, _ := strings.Cut(res, ".")
		if (kind != "limits" && kind != "requests") || !(rest == "cpu" || rest == "memory" ||
			rest == "ephemeral-storage" || strings.HasPrefix(rest, "hugepages-")) {
			t.Fatalf("Resource(%q) accepted: %q", res, got)
		}
		n, err := strconv.ParseInt(got, 10, 64)
		if err != nil {
			t.Fatalf("Resource(%q) = %q, not an integer", res, got)
		}
		q := c.Resources.Requests[name]
		if kind == "limits" {
			var set bool
			if q, set = c.Resources.Limits[name]; !set {
				q = quantities(name, allocatable)[name]
			}
		}
		if q.Sign() >= 0 && ref.Divisor.Sign() >= 0 && n < 0 {
			t.Fatalf("Resource(%q) of %s / %s = %d", res, q.String(), ref.Divisor.String(), n)
		}
	})
}

// quantities returns {name: s} when s parses as a quantity.
func quantities(name corev1.ResourceName, s string) corev1.ResourceList {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil
	}
	return corev1.ResourceList{name: q}
}
