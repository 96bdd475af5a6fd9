package volume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestFieldValue(t *testing.T) {
	tests := []struct {
		path    string
		want    string
		wantErr bool
	}{
		{path: "metadata.name", want: "web"},
		{path: "metadata.namespace", want: "ns"},
		{path: "metadata.uid", want: "uid-1"},
		{path: "metadata.labels", want: "app=\"web\"\ntier=\"front\""},
		{path: "metadata.annotations", want: `note="say \"hi\""`},
		{path: "metadata.labels['tier']", want: "front"},
		{path: "metadata.labels['missing']", want: ""},
		{path: "metadata.annotations['note']", want: `say "hi"`},
		{path: "spec.nodeName", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := fieldValue(testPod(), tt.path)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("fieldValue() = %q, %v; want %q, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestResourceValue(t *testing.T) {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	tests := []struct {
		name     string
		resource string
		divisor  string
		want     string
		wantErr  bool
	}{
		{name: "memory limit bytes", resource: "limits.memory", want: "67108864"},
		{name: "memory limit Mi", resource: "limits.memory", divisor: "1Mi", want: "64"},
		{name: "cpu request rounds up to cores", resource: "requests.cpu", want: "1"},
		{name: "cpu request millicores", resource: "requests.cpu", divisor: "1m", want: "250"},
		{name: "cpu limit from allocatable", resource: "limits.cpu", want: "4"},
		{name: "ephemeral limit from allocatable", resource: "limits.ephemeral-storage", divisor: "1Gi", want: "10"},
		{name: "memory request unset", resource: "requests.memory", want: "0"},
		{name: "unsupported", resource: "limits.nvidia.com/gpu", wantErr: true},
		{name: "malformed", resource: "cpu", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := &corev1.ResourceFieldSelector{ContainerName: "c", Resource: tt.resource}
			if tt.divisor != "" {
				ref.Divisor = resource.MustParse(tt.divisor)
			}
			got, err := resourceValue(testPod(), ref, alloc)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("resourceValue() = %q, %v; want %q, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := resourceValue(testPod(), &corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}, alloc); err == nil {
		t.Error("resourceValue() of an unknown container: no error")
	}
}
