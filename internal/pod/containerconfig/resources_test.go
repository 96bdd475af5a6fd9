package containerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

func TestOOMGroup(t *testing.T) {
	tests := []struct {
		v2     bool
		single *bool
		want   bool
	}{
		{v2: true, want: true},
		{v2: true, single: ptr.To(false), want: true},
		{v2: true, single: ptr.To(true), want: false},
		{v2: false, want: false},
		{v2: false, single: ptr.To(true), want: false},
	}
	for _, tt := range tests {
		if got := OOMGroup(tt.v2, tt.single); got != tt.want {
			t.Errorf("OOMGroup(%t, %v) = %t, want %t", tt.v2, ptr.Deref(tt.single, false), got, tt.want)
		}
	}
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestContainerResources(t *testing.T) {
	lp := Node{MemoryCapacity: 4 << 30, HugePageSizes: []int64{2 << 20, 1 << 30}}
	zeroPages := []*runtimeapi.HugepageLimit{{PageSize: "2MB"}, {PageSize: "1GB"}}
	tests := []struct {
		name     string
		res      corev1.ResourceRequirements
		podLevel *corev1.ResourceRequirements
		lp       *Node
		want     *runtimeapi.LinuxContainerResources
	}{
		{
			name: "nothing set: BestEffort",
			want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000, HugepageLimits: zeroPages},
		},
		{
			name: "requests only: Burstable scored by memory request",
			res:  corev1.ResourceRequirements{Requests: rl("cpu", "250m", "memory", "1Gi")},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, OomScoreAdj: 750, HugepageLimits: zeroPages},
		},
		{
			name: "no cpu request: shares from the limit",
			res:  corev1.ResourceRequirements{Requests: rl("memory", "128Mi"), Limits: rl("cpu", "500m", "memory", "128Mi")},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 128 << 20, OomScoreAdj: 969, HugepageLimits: zeroPages},
		},
		{
			name: "requests and limits",
			res: corev1.ResourceRequirements{
				Requests: rl("cpu", "100m"),
				Limits:   rl("cpu", "2", "memory", "1Gi"),
			},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, CpuQuota: 200000, MemoryLimitInBytes: 1 << 30, OomScoreAdj: 999, HugepageLimits: zeroPages},
		},
		{
			name: "hugepages limits per page size",
			res: corev1.ResourceRequirements{
				Requests: rl("cpu", "1", "memory", "64Mi", "hugepages-2Mi", "8Mi"),
				Limits:   rl("cpu", "1", "memory", "64Mi", "hugepages-2Mi", "8Mi"),
			},
			want: &runtimeapi.LinuxContainerResources{
				CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 64 << 20, OomScoreAdj: -997,
				HugepageLimits: []*runtimeapi.HugepageLimit{{PageSize: "2MB", Limit: 8 << 20}, {PageSize: "1GB"}},
			},
		},
		{
			name: "a size the node lacks is dropped",
			res:  corev1.ResourceRequirements{Limits: rl("hugepages-1Gi", "1Gi")},
			lp:   &Node{MemoryCapacity: 4 << 30, HugePageSizes: []int64{2 << 20}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000, HugepageLimits: []*runtimeapi.HugepageLimit{{PageSize: "2MB"}}},
		},
		{
			name: "cpuCFSQuota false: no quota and no period",
			res:  corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "2", "memory", "1Gi")},
			lp:   &Node{MemoryCapacity: 4 << 30, Resources: ResourceSettings{CFS: cgroupmath.CFS{Unenforced: true, Period: 50000}}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 1 << 30, OomScoreAdj: 999},
		},
		{
			name: "cpuCFSQuotaPeriod 50ms: the quota is over that period",
			res:  corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "2", "memory", "1Gi")},
			lp:   &Node{MemoryCapacity: 4 << 30, Resources: ResourceSettings{CFS: cgroupmath.CFS{Period: 50000}}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 50000, CpuQuota: 100000, MemoryLimitInBytes: 1 << 30, OomScoreAdj: 999},
		},
		{
			name:     "pod-level limits for what the container lacks; shares from them without a request",
			res:      corev1.ResourceRequirements{Limits: rl("memory", "64Mi")},
			podLevel: &corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "128Mi"), Limits: rl("cpu", "1", "memory", "128Mi")},
			want:     &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 64 << 20, OomScoreAdj: -997, HugepageLimits: zeroPages},
		},
		{
			name: "OOMGroup: memory.oom.group set",
			lp:   &Node{Resources: ResourceSettings{OOMGroup: true}},
			want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000, Unified: map[string]string{"memory.oom.group": "1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := corev1.Container{Name: "app", Resources: tt.res}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}, Resources: tt.podLevel}}
			p := lp
			if tt.lp != nil {
				p = *tt.lp
			}
			got := containerResources(pod, &pod.Spec.Containers[0], p, "")
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("containerResources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOOMScoreAdjust(t *testing.T) {
	const capacity = 10 << 30
	always := corev1.ContainerRestartPolicyAlways
	prio := int32(2000001000)
	burstable := func(mem string) corev1.Container {
		return corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{Requests: rl("memory", mem)}}
	}
	tests := []struct {
		name     string
		pod      corev1.Pod
		capacity int64
		want     int64
	}{
		{name: "BestEffort", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}, want: 1000},
		{
			name: "Guaranteed",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("cpu", "1", "memory", "1Gi")}}}}},
			want: -997,
		},
		{name: "Burstable, half the memory", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{burstable("5Gi")}}}, want: 500},
		{name: "Burstable, no memory request is 999", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}}}, want: 999},
		{name: "Burstable, more than the node is 3", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{burstable("20Gi")}}}, want: 3},
		{name: "Burstable, unknown capacity is 999", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{burstable("5Gi")}}}, capacity: -1, want: 999},
		{
			name: "status QoS class wins",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{burstable("5Gi")}}, Status: corev1.PodStatus{QOSClass: corev1.PodQOSGuaranteed}},
			want: -997,
		},
		{
			name: "node-critical static pod",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/config.source": "file"}},
				Spec:       corev1.PodSpec{PriorityClassName: "system-node-critical", Containers: []corev1.Container{burstable("5Gi")}},
			},
			want: -997,
		},
		{
			name: "node-critical by priority",
			pod:  corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-node-critical", Priority: &prio, Containers: []corev1.Container{burstable("5Gi")}}},
			want: -997,
		},
		{
			name: "system-node-critical class alone is not critical",
			pod:  corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-node-critical", Containers: []corev1.Container{burstable("5Gi")}}},
			want: 500,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.capacity
			if c == 0 {
				c = capacity
			}
			if got := oomScoreAdjust(&tt.pod, &tt.pod.Spec.Containers[0], c); got != tt.want {
				t.Errorf("oomScoreAdjust = %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("sidecar scores no higher than the smallest regular container", func(t *testing.T) {
		pod := corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("memory", "1Gi")}}},
			Containers:     []corev1.Container{burstable("5Gi"), {Name: "b", Resources: corev1.ResourceRequirements{Requests: rl("memory", "4Gi")}}},
		}}
		if got := oomScoreAdjust(&pod, &pod.Spec.InitContainers[0], capacity); got != 600 {
			t.Errorf("oomScoreAdjust(sidecar) = %d, want 600", got)
		}
	})
}

func TestHugePageSizeName(t *testing.T) {
	tests := []struct {
		bytes int64
		want  string
	}{{2 << 20, "2MB"}, {1 << 30, "1GB"}, {64 << 10, "64KB"}, {512, "512B"}, {16 << 30, "16GB"}}
	for _, tt := range tests {
		if got := hugePageSizeName(tt.bytes); got != tt.want {
			t.Errorf("hugePageSizeName(%d) = %q, want %q", tt.bytes, got, tt.want)
		}
	}
}

func TestSandboxResources(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	ctr := func(name string, req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	tests := []struct {
		name         string
		spec         corev1.PodSpec
		res          ResourceSettings
		wantRes      *runtimeapi.LinuxContainerResources
		wantOverhead *runtimeapi.LinuxContainerResources
	}{
		{
			name:         "no resources, no overhead",
			spec:         corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000},
			wantOverhead: &runtimeapi.LinuxContainerResources{},
		},
		{
			name: "containers add up; overhead kept apart as requests equal limits",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{
					ctr("a", rl("cpu", "100m"), rl("cpu", "200m", "memory", "64Mi")),
					ctr("b", rl("cpu", "300m"), rl("cpu", "300m", "memory", "64Mi")),
				},
				Overhead: rl("cpu", "250m", "memory", "120Mi"),
			},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 409, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 128 << 20},
			wantOverhead: &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, CpuQuota: 25000, MemoryLimitInBytes: 120 << 20},
		},
		{
			name: "a big init container wins; sidecars count with it and with the containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m")}},
					ctr("init", rl("cpu", "1"), nil),
				},
				Containers: []corev1.Container{ctr("a", rl("cpu", "200m"), nil)},
			},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 1126, CpuPeriod: 100000},
			wantOverhead: &runtimeapi.LinuxContainerResources{},
		},
		{
			name: "pod-level resources win",
			spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "2", "memory", "1Gi")},
				Containers: []corev1.Container{ctr("a", rl("cpu", "100m"), nil)},
			},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 200000, MemoryLimitInBytes: 1 << 30},
			wantOverhead: &runtimeapi.LinuxContainerResources{},
		},
		{
			name: "quotas unenforced and OOM group: sandbox and overhead alike",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{ctr("a", rl("cpu", "100m"), rl("cpu", "200m", "memory", "64Mi"))},
				Overhead:   rl("cpu", "250m", "memory", "120Mi"),
			},
			res:          ResourceSettings{CFS: cgroupmath.CFS{Unenforced: true}, OOMGroup: true},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 64 << 20, Unified: map[string]string{"memory.oom.group": "1"}},
			wantOverhead: &runtimeapi.LinuxContainerResources{CpuShares: 256, MemoryLimitInBytes: 120 << 20, Unified: map[string]string{"memory.oom.group": "1"}},
		},
		{
			name:         "cpuCFSQuotaPeriod 1s",
			spec:         corev1.PodSpec{Containers: []corev1.Container{ctr("a", nil, rl("cpu", "500m"))}},
			res:          ResourceSettings{CFS: cgroupmath.CFS{Period: 1000000}},
			wantRes:      &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 1000000, CpuQuota: 500000},
			wantOverhead: &runtimeapi.LinuxContainerResources{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.spec}
			if diff := cmp.Diff(tt.wantRes, sandboxResources(pod, tt.res), protocmp.Transform()); diff != "" {
				t.Errorf("sandboxResources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOverhead, overheadResources(pod, tt.res), protocmp.Transform()); diff != "" {
				t.Errorf("overheadResources (-want +got):\n%s", diff)
			}
		})
	}
}
