package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestEffectiveLimits(t *testing.T) {
	rr := func(cpu, mem string) corev1.ResourceRequirements {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return corev1.ResourceRequirements{Limits: l}
	}
	pod := rr("2", "1Gi")
	tests := []struct {
		name        string
		c           corev1.ResourceRequirements
		pod         *corev1.ResourceRequirements
		cpu, memory string
	}{
		{"container's own", rr("500m", "64Mi"), &pod, "500m", "64Mi"},
		{"pod-level for what the container lacks", rr("500m", ""), &pod, "500m", "1Gi"},
		{"no pod-level resources", rr("", "64Mi"), nil, "0", "64Mi"},
		{"pod-level requests only", rr("", ""), &corev1.ResourceRequirements{Requests: pod.Limits}, "0", "0"},
	}
	for _, tt := range tests {
		cpu, mem := EffectiveLimits(tt.c, tt.pod)
		if cpu.String() != tt.cpu || mem.String() != tt.memory {
			t.Errorf("%s: EffectiveLimits = %s, %s; want %s, %s", tt.name, cpu.String(), mem.String(), tt.cpu, tt.memory)
		}
	}
}
