package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

const mi = 1 << 20

// memPod is a one-container pod with the given memory request and limit
// ("" for none) and 100m of cpu request, so a pod with neither is
// Burstable only when it asks for memory.
func memPod(request, limit string) *corev1.Pod {
	c := corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	if request != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(request)
	}
	if limit != "" {
		c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
	}
	if request != "" && request == limit {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

func TestContainerMemoryQoS(t *testing.T) {
	v2 := cgroupmath.MemorySettings{CgroupV2: true, QoS: true, ThrottlingFactor: ptr.To(0.9), AllocatableMemory: 32 * 1024 * mi, PageSize: 4096}
	tiered := v2
	tiered.TieredReservation = true
	noFactor := v2
	noFactor.ThrottlingFactor = nil
	gateOff := v2
	gateOff.QoS = false
	v1 := cgroupmath.MemorySettings{QoS: true, ThrottlingFactor: ptr.To(0.9), AllocatableMemory: 32 * 1024 * mi}
	withSwap := func(s cgroupmath.MemorySettings, behavior string) cgroupmath.MemorySettings {
		s.Swap = cgroupmath.SwapSettings{ControllerAvailable: true, Behavior: behavior, Capacity: 4096 * mi, MemoryCapacity: 8192 * mi}
		return s
	}
	podLevel := memPod("", "")
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	critical := memPod("128Mi", "256Mi")
	critical.Spec.Priority = ptr.To(int32(2000000000))

	for _, tt := range []struct {
		name  string
		pod   *corev1.Pod
		s     cgroupmath.MemorySettings
		limit int64
		want  ContainerMemory
	}{
		{"burstable, limit", memPod("128Mi", "256Mi"), v2, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0", cgroupmath.MemoryHigh: "255012864"}}},
		{"burstable, no limit: allocatable", memPod("128Mi", ""), v2, 0,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0", cgroupmath.MemoryHigh: "30937186304"}}},
		{"besteffort: allocatable", memPod("", ""), v2, 0,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0", cgroupmath.MemoryHigh: "30923763712"}}},
		{"guaranteed: no memory.high", memPod("256Mi", "256Mi"), v2, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0"}}},
		{"tiered, guaranteed: memory.min", memPod("256Mi", "256Mi"), tiered, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "268435456"}}},
		{"tiered, burstable: memory.low", memPod("128Mi", "256Mi"), tiered, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryLow: "134217728", cgroupmath.MemoryHigh: "255012864"}}},
		{"tiered, no request", memPod("", ""), tiered, 0,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0", cgroupmath.MemoryHigh: "30923763712"}}},
		{"no factor: no memory.high", memPod("128Mi", "256Mi"), noFactor, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0"}}},
		{"pod-level limit throttles", podLevel, v2, 0,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0"}}},
		{"high not above request", memPod("128Mi", "128Mi"), v2, 128 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0"}}},
		{"gate off on v2: memory.high max", memPod("128Mi", "256Mi"), gateOff, 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.MemoryHigh: "max"}}},
		{"cgroup v1: nothing", memPod("128Mi", "256Mi"), v1, 256 * mi, ContainerMemory{}},
		{"cgroup v1, swap controller: memsw = limit", memPod("128Mi", "256Mi"), withSwap(v1, ""), 256 * mi,
			ContainerMemory{SwapLimit: 256 * mi}},
		{"cgroup v1, LimitedSwap: still memsw = limit", memPod("128Mi", "256Mi"), withSwap(v1, cgroupmath.LimitedSwap), 256 * mi,
			ContainerMemory{SwapLimit: 256 * mi}},
		{"cgroup v2, NoSwap", memPod("128Mi", "256Mi"), withSwap(v2, cgroupmath.NoSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.SwapMax: "0", cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0", cgroupmath.MemoryHigh: "255012864"}}},
		{"cgroup v2, LimitedSwap: share of swap", memPod("128Mi", "256Mi"), withSwap(gateOff, cgroupmath.LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.SwapMax: "67108864", cgroupmath.MemoryHigh: "max"}}},
		{"LimitedSwap, critical pod", critical, withSwap(gateOff, cgroupmath.LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.SwapMax: "0", cgroupmath.MemoryHigh: "max"}}},
		{"LimitedSwap, guaranteed", memPod("256Mi", "256Mi"), withSwap(gateOff, cgroupmath.LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.SwapMax: "0", cgroupmath.MemoryHigh: "max"}}},
		{"LimitedSwap, request above memory", memPod("9Gi", "10Gi"), withSwap(gateOff, cgroupmath.LimitedSwap), 10240 * mi,
			ContainerMemory{Unified: map[string]string{cgroupmath.SwapMax: "0", cgroupmath.MemoryHigh: "max"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ContainerMemoryQoS(tt.pod, &tt.pod.Spec.Containers[0], tt.limit, tt.s)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ContainerMemoryQoS (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSwapBehavior follows upstream's TestGetContainerSwapBehavior.
func TestSwapBehavior(t *testing.T) {
	on := cgroupmath.MemorySettings{CgroupV2: true, Swap: cgroupmath.SwapSettings{ControllerAvailable: true, Behavior: cgroupmath.LimitedSwap}}
	noController, v1, noSwap := on, on, on
	noController.Swap.ControllerAvailable = false
	v1.CgroupV2 = false
	noSwap.Swap.Behavior = cgroupmath.NoSwap
	guaranteedByStatus := memPod("128Mi", "256Mi")
	guaranteedByStatus.Status.QOSClass = corev1.PodQOSGuaranteed
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		s    cgroupmath.MemorySettings
		want string
	}{
		{"NoSwap configured", memPod("128Mi", "256Mi"), noSwap, cgroupmath.NoSwap},
		{"no swap controller", memPod("128Mi", "256Mi"), noController, cgroupmath.NoSwap},
		{"cgroup v1", memPod("128Mi", "256Mi"), v1, cgroupmath.NoSwap},
		{"besteffort", memPod("", ""), on, cgroupmath.NoSwap},
		{"guaranteed", memPod("256Mi", "256Mi"), on, cgroupmath.NoSwap},
		{"status says guaranteed", guaranteedByStatus, on, cgroupmath.NoSwap},
		{"request equals limit", memPod("256Mi", "256Mi"), on, cgroupmath.NoSwap},
		{"burstable", memPod("128Mi", "256Mi"), on, cgroupmath.LimitedSwap},
		{"burstable, request only", memPod("128Mi", ""), on, cgroupmath.LimitedSwap},
	} {
		if got := SwapBehavior(tt.pod, &tt.pod.Spec.Containers[0], tt.s); got != tt.want {
			t.Errorf("%s: SwapBehavior = %q, want %q", tt.name, got, tt.want)
		}
	}
}
