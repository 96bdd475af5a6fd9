package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
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

// TestMemoryHighOf pins KEP-2570's formula with upstream's test numbers
// (TestGenerateContainerConfigWithMemoryQoSEnforced: 128Mi requested,
// 256Mi limit or 32Gi allocatable, factor 0.9, 4 KiB pages).
func TestMemoryHighOf(t *testing.T) {
	for _, tt := range []struct {
		request, limit int64
		factor         float64
		want           int64
	}{
		{128 * mi, 256 * mi, 0.9, 255012864},
		{128 * mi, 32 * 1024 * mi, 0.9, 30937186304},
		{0, 32 * 1024 * mi, 0.9, 30923763712},
		{128 * mi, 256 * mi, 0.5, 192 * mi},
		{128 * mi, 256 * mi, 1, 256 * mi},
		{100, 10000, 0.9, 8192},
	} {
		if got := MemoryHighOf(tt.request, tt.limit, tt.factor, 4096); got != tt.want {
			t.Errorf("MemoryHighOf(%d, %d, %v) = %d, want %d", tt.request, tt.limit, tt.factor, got, tt.want)
		}
	}
}

func TestContainerMemoryQoS(t *testing.T) {
	v2 := MemorySettings{CgroupV2: true, QoS: true, ThrottlingFactor: ptr.To(0.9), AllocatableMemory: 32 * 1024 * mi, PageSize: 4096}
	tiered := v2
	tiered.TieredReservation = true
	noFactor := v2
	noFactor.ThrottlingFactor = nil
	gateOff := v2
	gateOff.QoS = false
	v1 := MemorySettings{QoS: true, ThrottlingFactor: ptr.To(0.9), AllocatableMemory: 32 * 1024 * mi}
	withSwap := func(s MemorySettings, behavior string) MemorySettings {
		s.Swap = SwapSettings{ControllerAvailable: true, Behavior: behavior, Capacity: 4096 * mi, MemoryCapacity: 8192 * mi}
		return s
	}
	podLevel := memPod("", "")
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	critical := memPod("128Mi", "256Mi")
	critical.Spec.Priority = ptr.To(int32(2000000000))

	for _, tt := range []struct {
		name  string
		pod   *corev1.Pod
		s     MemorySettings
		limit int64
		want  ContainerMemory
	}{
		{"burstable, limit", memPod("128Mi", "256Mi"), v2, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0", MemoryHigh: "255012864"}}},
		{"burstable, no limit: allocatable", memPod("128Mi", ""), v2, 0,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0", MemoryHigh: "30937186304"}}},
		{"besteffort: allocatable", memPod("", ""), v2, 0,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0", MemoryHigh: "30923763712"}}},
		{"guaranteed: no memory.high", memPod("256Mi", "256Mi"), v2, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0"}}},
		{"tiered, guaranteed: memory.min", memPod("256Mi", "256Mi"), tiered, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryMin: "268435456"}}},
		{"tiered, burstable: memory.low", memPod("128Mi", "256Mi"), tiered, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryLow: "134217728", MemoryHigh: "255012864"}}},
		{"tiered, no request", memPod("", ""), tiered, 0,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0", MemoryHigh: "30923763712"}}},
		{"no factor: no memory.high", memPod("128Mi", "256Mi"), noFactor, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0"}}},
		{"pod-level limit throttles", podLevel, v2, 0,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0"}}},
		{"high not above request", memPod("128Mi", "128Mi"), v2, 128 * mi,
			ContainerMemory{Unified: map[string]string{MemoryMin: "0", MemoryLow: "0"}}},
		{"gate off on v2: memory.high max", memPod("128Mi", "256Mi"), gateOff, 256 * mi,
			ContainerMemory{Unified: map[string]string{MemoryHigh: "max"}}},
		{"cgroup v1: nothing", memPod("128Mi", "256Mi"), v1, 256 * mi, ContainerMemory{}},
		{"cgroup v1, swap controller: memsw = limit", memPod("128Mi", "256Mi"), withSwap(v1, ""), 256 * mi,
			ContainerMemory{SwapLimit: 256 * mi}},
		{"cgroup v1, LimitedSwap: still memsw = limit", memPod("128Mi", "256Mi"), withSwap(v1, LimitedSwap), 256 * mi,
			ContainerMemory{SwapLimit: 256 * mi}},
		{"cgroup v2, NoSwap", memPod("128Mi", "256Mi"), withSwap(v2, NoSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{SwapMax: "0", MemoryMin: "0", MemoryLow: "0", MemoryHigh: "255012864"}}},
		{"cgroup v2, LimitedSwap: share of swap", memPod("128Mi", "256Mi"), withSwap(gateOff, LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{SwapMax: "67108864", MemoryHigh: "max"}}},
		{"LimitedSwap, critical pod", critical, withSwap(gateOff, LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{SwapMax: "0", MemoryHigh: "max"}}},
		{"LimitedSwap, guaranteed", memPod("256Mi", "256Mi"), withSwap(gateOff, LimitedSwap), 256 * mi,
			ContainerMemory{Unified: map[string]string{SwapMax: "0", MemoryHigh: "max"}}},
		{"LimitedSwap, request above memory", memPod("9Gi", "10Gi"), withSwap(gateOff, LimitedSwap), 10240 * mi,
			ContainerMemory{Unified: map[string]string{SwapMax: "0", MemoryHigh: "max"}}},
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
	on := MemorySettings{CgroupV2: true, Swap: SwapSettings{ControllerAvailable: true, Behavior: LimitedSwap}}
	noController, v1, noSwap := on, on, on
	noController.Swap.ControllerAvailable = false
	v1.CgroupV2 = false
	noSwap.Swap.Behavior = NoSwap
	guaranteedByStatus := memPod("128Mi", "256Mi")
	guaranteedByStatus.Status.QOSClass = corev1.PodQOSGuaranteed
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		s    MemorySettings
		want string
	}{
		{"NoSwap configured", memPod("128Mi", "256Mi"), noSwap, NoSwap},
		{"no swap controller", memPod("128Mi", "256Mi"), noController, NoSwap},
		{"cgroup v1", memPod("128Mi", "256Mi"), v1, NoSwap},
		{"besteffort", memPod("", ""), on, NoSwap},
		{"guaranteed", memPod("256Mi", "256Mi"), on, NoSwap},
		{"status says guaranteed", guaranteedByStatus, on, NoSwap},
		{"request equals limit", memPod("256Mi", "256Mi"), on, NoSwap},
		{"burstable", memPod("128Mi", "256Mi"), on, LimitedSwap},
		{"burstable, request only", memPod("128Mi", ""), on, LimitedSwap},
	} {
		if got := SwapBehavior(tt.pod, &tt.pod.Spec.Containers[0], tt.s); got != tt.want {
			t.Errorf("%s: SwapBehavior = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestMemoryNamesMatchUpstream pins the cgroup file names and swap
// behaviours to upstream's constants.
func TestMemoryNamesMatchUpstream(t *testing.T) {
	const (
		cm    = "k8s.io/kubernetes/pkg/kubelet/cm"
		types = "k8s.io/kubernetes/pkg/kubelet/types"
	)
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{MemoryMin, cm, "Cgroup2MemoryMin"},
		{MemoryLow, cm, "Cgroup2MemoryLow"},
		{MemoryHigh, cm, "Cgroup2MemoryHigh"},
		{SwapMax, cm, "Cgroup2MaxSwapFilename"},
		{NoSwap, types, "NoSwap"},
		{LimitedSwap, types, "LimitedSwap"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
}
