package allocation

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Node is what decides whether a node can resize a pod in place at all.
type Node struct {
	// StaticCPUManager, StaticMemoryManager: the CPU or memory manager
	// runs its static policy (a Guaranteed pod's cpu or memory cannot
	// change: InPlacePodVerticalScalingExclusiveCPUs/Memory are alpha and
	// off).
	StaticCPUManager, StaticMemoryManager bool
	// Swap is the container's swap behaviour
	// (containerconfig.SwapBehavior); nil is NoSwap for every container.
	Swap func(pod *corev1.Pod, c *corev1.Container) string
}

// The resize infeasibility messages, as upstream's.
const (
	msgSwap                = "In-place resize of containers with swap is not supported."
	msgStaticCPUManager    = `Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"`
	msgStaticMemoryManager = `Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"`
	msgMemoryBackedVolumes = "Memory-backed emptyDir volume resize is disabled"
)

// The reason_detail of kubelet_pod_infeasible_resizes_total for each
// infeasibility, as upstream's podResizesAdmitHandler (pinned by
// TestInfeasibleDetailsMatchUpstream).
const (
	detailSwap                = "swap_limitation"
	detailStaticCPUManager    = "guaranteed_pod_cpu_manager_static_policy"
	detailStaticMemoryManager = "guaranteed_pod_memory_manager_static_policy"
	detailMemoryBackedVolumes = "memory_volume_resize_gate_off"
)

// Infeasible is upstream's podResizesAdmitHandler: a resize from
// allocated to desired that no retry can admit (PodReasonInfeasible),
// with upstream's message and the reason_detail upstream counts it under;
// both "" when the resize may be admitted.
func Infeasible(desired, allocated *corev1.Pod, n Node) (message, detail string) {
	if swapResize(desired, allocated, n.Swap) {
		return msgSwap, detailSwap
	}
	if memoryBackedVolumeResize(desired, allocated) {
		return msgMemoryBackedVolumes, detailMemoryBackedVolumes
	}
	if podutil.QOSClass(desired) == corev1.PodQOSGuaranteed {
		if n.StaticCPUManager && requestChanged(desired, allocated, corev1.ResourceCPU) {
			return msgStaticCPUManager, detailStaticCPUManager
		}
		if n.StaticMemoryManager && requestChanged(desired, allocated, corev1.ResourceMemory) {
			return msgStaticMemoryManager, detailStaticMemoryManager
		}
	}
	return "", ""
}

// swapResize: a container's memory request changes without a restart
// while it (before or after) may swap.
func swapResize(desired, allocated *corev1.Pod, swap func(*corev1.Pod, *corev1.Container) string) bool {
	if swap == nil {
		return false
	}
	for _, init := range []bool{true, false} {
		for i := range containersOf(desired, init) {
			d := &containersOf(desired, init)[i]
			a := containerNamed(allocated, d.Name)
			if a == nil || d.Resources.Requests.Memory().Equal(*a.Resources.Requests.Memory()) || restartsOnMemory(a) {
				continue
			}
			if swap(desired, d) != cgroupmath.NoSwap || swap(allocated, a) != cgroupmath.NoSwap {
				return true
			}
		}
	}
	return false
}

func restartsOnMemory(c *corev1.Container) bool {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == corev1.ResourceMemory {
			return p.RestartPolicy == corev1.RestartContainer
		}
	}
	return false
}

// requestChanged: a container's request for r differs between the two.
func requestChanged(desired, allocated *corev1.Pod, r corev1.ResourceName) bool {
	for _, init := range []bool{true, false} {
		for i := range containersOf(desired, init) {
			d := &containersOf(desired, init)[i]
			a := containerNamed(allocated, d.Name)
			if a == nil {
				continue
			}
			dq, aq := d.Resources.Requests[r], a.Resources.Requests[r]
			if !dq.Equal(aq) {
				return true
			}
		}
	}
	return false
}

// memoryBackedVolumeResize: a memory-backed emptyDir's sizeLimit changes
// (InPlacePodVerticalScalingMemoryBackedVolumes is alpha and off).
func memoryBackedVolumeResize(desired, allocated *corev1.Pod) bool {
	if len(desired.Spec.Volumes) != len(allocated.Spec.Volumes) {
		return false
	}
	for i, a := range allocated.Spec.Volumes {
		if a.EmptyDir == nil || a.EmptyDir.Medium != corev1.StorageMediumMemory || a.EmptyDir.SizeLimit == nil || a.EmptyDir.SizeLimit.IsZero() {
			continue
		}
		d := desired.Spec.Volumes[i].EmptyDir
		if d == nil || d.SizeLimit == nil || !d.SizeLimit.Equal(*a.EmptyDir.SizeLimit) {
			return true
		}
	}
	return false
}

func containerNamed(pod *corev1.Pod, name string) *corev1.Container {
	for _, init := range []bool{true, false} {
		for i := range containersOf(pod, init) {
			if containersOf(pod, init)[i].Name == name {
				return &containersOf(pod, init)[i]
			}
		}
	}
	return nil
}
