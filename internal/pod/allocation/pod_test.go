package allocation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestApply(t *testing.T) {
	pod := podWithCPU("a", "100m", 1)
	pod.Spec.InitContainers = []corev1.Container{{Name: "i"}}
	r := For(pod)
	if out, changed := Apply(pod, r); changed || out != pod {
		t.Errorf("Apply of the pod's own allocation copied it (changed %v)", changed)
	}
	r.ContainerResources["c"] = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}
	r.PodLevelResources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	out, changed := Apply(pod, r)
	if !changed || out == pod {
		t.Fatalf("Apply of another allocation did not copy")
	}
	if got := out.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "50m" {
		t.Errorf("container cpu = %s, want 50m", got)
	}
	if out.Spec.Resources == nil || out.Spec.Resources.Limits.Cpu().String() != "1" {
		t.Errorf("pod-level resources = %v", out.Spec.Resources)
	}
	if pod.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" || pod.Spec.Resources != nil {
		t.Errorf("Apply modified its input")
	}
}

func memoryVolume(p *corev1.Pod, limit string) *corev1.Pod {
	q := resource.MustParse(limit)
	p.Spec.Volumes = []corev1.Volume{{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &q}}}}
	return p
}

func TestInfeasible(t *testing.T) {
	guaranteed := func(cpu string) *corev1.Pod {
		p := podWithCPU("g", cpu, 1)
		p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests.DeepCopy()
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("64Mi")
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("64Mi")
		return p
	}
	swapAll := func(*corev1.Pod, *corev1.Container) string { return "LimitedSwap" }
	memory := func(p *corev1.Pod, m string) *corev1.Pod {
		p = p.DeepCopy()
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse(m)
		if _, ok := p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; ok {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse(m)
		}
		return p
	}
	tests := []struct {
		name               string
		desired, allocated *corev1.Pod
		node               Node
		want, detail       string
	}{
		{"cpu of a Guaranteed pod, static CPU manager", guaranteed("2"), guaranteed("1"), Node{StaticCPUManager: true}, msgStaticCPUManager, detailStaticCPUManager},
		{"cpu of a Guaranteed pod, no static policy", guaranteed("2"), guaranteed("1"), Node{}, "", ""},
		{"memory of a Guaranteed pod, static memory manager", memory(guaranteed("1"), "32Mi"), guaranteed("1"), Node{StaticMemoryManager: true}, msgStaticMemoryManager, detailStaticMemoryManager},
		{"memory request of a swapping container", memory(podWithCPU("b", "1", 1), "32Mi"), memory(podWithCPU("b", "1", 1), "64Mi"), Node{Swap: swapAll}, msgSwap, detailSwap},
		{"cpu of a swapping container", podWithCPU("b", "2", 1), podWithCPU("b", "1", 1), Node{Swap: swapAll}, "", ""},
		{"sizeLimit of a memory-backed emptyDir", memoryVolume(podWithCPU("v", "1", 1), "32Mi"), memoryVolume(podWithCPU("v", "1", 1), "64Mi"), Node{}, msgMemoryBackedVolumes, detailMemoryBackedVolumes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, detail := Infeasible(tt.desired, tt.allocated, tt.node); got != tt.want || detail != tt.detail {
				t.Errorf("Infeasible = %q, %q; want %q, %q", got, detail, tt.want, tt.detail)
			}
		})
	}
}
