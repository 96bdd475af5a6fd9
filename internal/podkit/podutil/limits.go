package podutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EffectiveLimits are a container's cpu and memory limits, each the
// pod-level limit when the container sets none (upstream's getCPULimit
// and getMemoryLimit with PodLevelResources, on by default in v1.37). pod
// is the pod's spec.resources, nil when it sets none. The container's
// runtime resources and the resize planner both read limits this way.
func EffectiveLimits(c corev1.ResourceRequirements, pod *corev1.ResourceRequirements) (cpu, memory resource.Quantity) {
	cpu, memory = *c.Limits.Cpu(), *c.Limits.Memory()
	if pod == nil {
		return cpu, memory
	}
	if cpu.IsZero() {
		cpu = *pod.Limits.Cpu()
	}
	if memory.IsZero() {
		memory = *pod.Limits.Memory()
	}
	return cpu, memory
}
