package downward

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
