package downward

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFormatMap(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want string
	}{
		{name: "empty", in: nil, want: ""},
		{name: "sorted and quoted", in: map[string]string{"b": "2", "a": `x"y`, "c": "line\nbreak"}, want: "a=\"x\\\"y\"\nb=\"2\"\nc=\"line\\nbreak\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatMap(tt.in); got != tt.want {
				t.Errorf("FormatMap() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMetadata(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u",
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "1"}}}
	for _, tc := range []struct {
		path   string
		want   string
		wantOK bool
	}{
		{path: "metadata.name", want: "p", wantOK: true},
		{path: "metadata.namespace", want: "ns", wantOK: true},
		{path: "metadata.uid", want: "u", wantOK: true},
		{path: "metadata.labels", want: `app="web"`, wantOK: true},
		{path: "metadata.labels['app']", want: "web", wantOK: true},
		{path: "metadata.annotations['a']", want: "1", wantOK: true},
		{path: "metadata.annotations['missing']", want: "", wantOK: true},
		{path: "spec.nodeName", wantOK: false},
	} {
		got, ok := Metadata(pod, tc.path)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Metadata(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestCeilInt64(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want int64
	}{
		{in: 2.5, want: 3},
		{in: -2.5, want: -2},
		{in: float64(math.MaxInt64), want: math.MaxInt64}, // 2^63 as a float64
		{in: 1e30, want: math.MaxInt64},
		{in: -1e30, want: math.MinInt64},
		{in: math.NaN(), want: 0},
	} {
		if got := ceilInt64(tc.in); got != tc.want {
			t.Errorf("ceilInt64(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// Quantities beyond the int64 range, where upstream's q.Value() wraps
// around to a negative number, still give the nearest answer.
func TestResourceBeyondInt64(t *testing.T) {
	for _, tc := range []struct {
		res, quantity, divisor, want string
	}{
		{res: "limits.memory", quantity: "64Mi", want: "67108864"},
		{res: "limits.memory", quantity: "9270P", want: "9223372036854775807"},
		{res: "limits.memory", quantity: "100E", divisor: "1G", want: "100000000000"},
		{res: "limits.cpu", quantity: "10P", want: "10000000000000000"},
		{res: "limits.cpu", quantity: "10P", divisor: "1m", want: "9223372036854775807"},
	} {
		name := corev1.ResourceName(tc.res[len("limits."):])
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{name: resource.MustParse(tc.quantity)}}}}}}
		ref := &corev1.ResourceFieldSelector{ContainerName: "c", Resource: tc.res}
		if tc.divisor != "" {
			ref.Divisor = resource.MustParse(tc.divisor)
		}
		got, err := Resource(pod, nil, ref, nil)
		if err != nil || got != tc.want {
			t.Errorf("Resource(%s %s / %q) = %q, %v; want %q", tc.res, tc.quantity, tc.divisor, got, err, tc.want)
		}
	}
}
