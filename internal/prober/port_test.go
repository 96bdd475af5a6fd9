package prober

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestResolvePort(t *testing.T) {
	c := &corev1.Container{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, HostPort: 80}, {Name: "big", ContainerPort: 70000}}}
	tests := []struct {
		name    string
		port    intstr.IntOrString
		want    int
		wantErr bool
	}{
		{"number", intstr.FromInt32(81), 81, false},
		{"name gives the container port", intstr.FromString("http"), 8080, false},
		{"number as a string", intstr.FromString("9090"), 9090, false},
		{"unknown name", intstr.FromString("grpc"), 0, true},
		{"zero", intstr.FromInt32(0), 0, true},
		{"too big", intstr.FromInt32(65536), 0, true},
		{"named port out of range", intstr.FromString("big"), 0, true},
		{"no kind", intstr.IntOrString{Type: 7}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolvePort(tt.port, c)
			if (err != nil) != tt.wantErr {
				t.Fatalf("resolvePort: err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("resolvePort = %d, want %d", got, tt.want)
			}
		})
	}
}
