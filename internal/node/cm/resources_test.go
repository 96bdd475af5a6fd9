package cm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// guaranteed is a container whose requests equal its limits, as the API
// server defaults them.
func guaranteed(name string, limits corev1.ResourceList) corev1.Container {
	return ctr(name, limits, limits)
}

func ctr(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func podWith(uid string, cs ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: cs}}
	p.Name, p.Namespace, p.UID = "p-"+uid, "ns", types.UID(uid+testUID[len(uid):])
	return p
}

func TestForPod(t *testing.T) {
	opts := PodOptions{}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		opts PodOptions
		want Resources
	}{{
		name: "guaranteed: shares, quota, period and memory from the limits",
		pod:  podWith("g", guaranteed("a", rl("cpu", "500m", "memory", "128Mi")), guaranteed("b", rl("cpu", "250m", "memory", "64Mi"))),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](768), CPUQuota: ptr.To[int64](75000), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](192 << 20)},
	}, {
		name: "guaranteed without cpuCFSQuota: quota unlimited",
		pod:  podWith("g", guaranteed("a", rl("cpu", "1", "memory", "1Gi"))),
		opts: PodOptions{CFS: cgroupmath.CFS{Unenforced: true}},
		want: Resources{CPUShares: ptr.To[uint64](1024), CPUQuota: ptr.To[int64](-1), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](1 << 30)},
	}, {
		name: "guaranteed with cpuCFSQuotaPeriod 10ms: quota over that period",
		pod:  podWith("g", guaranteed("a", rl("cpu", "1", "memory", "1Gi"))),
		opts: PodOptions{CFS: cgroupmath.CFS{Period: 10000}},
		want: Resources{CPUShares: ptr.To[uint64](1024), CPUQuota: ptr.To[int64](10000), CPUPeriod: ptr.To[uint64](10000), Memory: ptr.To[int64](1 << 30)},
	}, {
		name: "burstable with every limit: shares from requests, quota and memory",
		pod:  podWith("b", ctr("a", rl("cpu", "100m", "memory", "64Mi"), rl("cpu", "200m", "memory", "128Mi"))),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](102), CPUQuota: ptr.To[int64](20000), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](128 << 20)},
	}, {
		name: "burstable, one container without limits: shares only",
		pod:  podWith("b", ctr("a", rl("cpu", "100m"), rl("cpu", "200m", "memory", "128Mi")), ctr("b", rl("memory", "1Mi"), nil)),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](102)},
	}, {
		name: "burstable, memory limits only: memory, no quota",
		pod:  podWith("b", ctr("a", rl("cpu", "1m"), rl("memory", "128Mi"))),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](2), Memory: ptr.To[int64](128 << 20)},
	}, {
		name: "besteffort: MinShares",
		pod:  podWith("e", ctr("a", nil, nil)),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](2)},
	}, {
		name: "podPidsLimit applies to every class",
		pod:  podWith("e", ctr("a", nil, nil)),
		opts: PodOptions{PidsLimit: 1024},
		want: Resources{CPUShares: ptr.To[uint64](2), PidsLimit: ptr.To[int64](1024)},
	}, {
		name: "pod-level limits declare them for every container",
		pod: func() *corev1.Pod {
			p := podWith("b", ctr("a", nil, nil))
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "300m", "memory", "32Mi")}
			return p
		}(),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](102), CPUQuota: ptr.To[int64](30000), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](32 << 20)},
	}, {
		name: "init containers: the larger of init and regular",
		pod: func() *corev1.Pod {
			p := podWith("g", guaranteed("a", rl("cpu", "100m", "memory", "10Mi")))
			p.Spec.InitContainers = []corev1.Container{guaranteed("i", rl("cpu", "2", "memory", "1Mi"))}
			return p
		}(),
		opts: opts,
		want: Resources{CPUShares: ptr.To[uint64](2048), CPUQuota: ptr.To[int64](200000), CPUPeriod: ptr.To[uint64](100000), Memory: ptr.To[int64](10 << 20)},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ForPod(tt.pod, tt.opts)); diff != "" {
				t.Errorf("ForPod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCPUWeight pins the v2 conversion to upstream's formula,
// 1 + ((shares-2)*9999)/262142, with its bounds.
func TestCPUWeight(t *testing.T) {
	for shares, want := range map[uint64]uint64{0: 1, 2: 1, 3: 1, 1024: 39, 2048: 79, 102: 4, 262143: 9999, 262144: 10000, 1 << 20: 10000} {
		if got := CPUWeight(shares); got != want {
			t.Errorf("CPUWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}

func TestForReserved(t *testing.T) {
	for _, tt := range []struct {
		name         string
		rl           corev1.ResourceList
		compressible bool
		want         Resources
	}{
		{"nil sets nothing", nil, false, Resources{}},
		{"cpu, memory and pid", rl("cpu", "1", "memory", "1Gi", "pid", "1000"), false,
			Resources{CPUShares: ptr.To[uint64](1024), Memory: ptr.To[int64](1 << 30), PidsLimit: ptr.To[int64](1000)}},
		{"compressible: cpu only", rl("cpu", "500m", "memory", "1Gi", "pid", "1000"), true, Resources{CPUShares: ptr.To[uint64](512)}},
		{"memory only", rl("memory", "100Mi"), false, Resources{Memory: ptr.To[int64](100 << 20)}},
	} {
		if diff := cmp.Diff(tt.want, ForReserved(tt.rl, tt.compressible)); diff != "" {
			t.Errorf("%s: ForReserved (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestEnforcedAllocatable(t *testing.T) {
	capacity := rl("cpu", "4", "memory", "8Gi", "pid", "4194304", "pods", "110")
	for _, tt := range []struct {
		name         string
		system, kube corev1.ResourceList
		want         corev1.ResourceList
	}{
		{"nothing reserved: capacity", nil, nil, capacity},
		{"both reservations subtracted", rl("cpu", "500m", "memory", "1Gi", "pid", "1000"), rl("cpu", "100m", "memory", "512Mi"),
			rl("cpu", "3400m", "memory", "6656Mi", "pid", "4193304", "pods", "110")},
		{"floored at zero", rl("memory", "6Gi"), rl("memory", "4Gi", "cpu", "8"), rl("cpu", "0", "memory", "0", "pid", "4194304", "pods", "110")},
		{"reservations of resources without capacity are ignored", rl("ephemeral-storage", "1Gi"), nil, capacity},
	} {
		got := EnforcedAllocatable(capacity, tt.system, tt.kube)
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("%s: EnforcedAllocatable (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestKubepodsResources(t *testing.T) {
	c := Config{Capacity: rl("cpu", "2", "memory", "4Gi", "pid", "1000"), SystemReserved: rl("memory", "1Gi", "pid", "100")}
	want := Resources{CPUShares: ptr.To[uint64](2048), Memory: ptr.To[int64](4 << 30), PidsLimit: ptr.To[int64](1000)}
	if diff := cmp.Diff(want, c.kubepodsResources()); diff != "" {
		t.Errorf("pods not enforced: kubepods (-want +got):\n%s", diff)
	}
	c.EnforceNodeAllocatable = []string{EnforcePods}
	want = Resources{CPUShares: ptr.To[uint64](2048), Memory: ptr.To[int64](3 << 30), PidsLimit: ptr.To[int64](900)}
	if diff := cmp.Diff(want, c.kubepodsResources()); diff != "" {
		t.Errorf("pods enforced: kubepods (-want +got):\n%s", diff)
	}
}

// TestNamesMatchUpstream pins the names berth shares with upstream: the
// enforcement keys, the kubepods cgroup, the pod prefix, the pid resource.
func TestNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{EnforcePods, "k8s.io/kubernetes/pkg/kubelet/types", "NodeAllocatableEnforcementKey"},
		{EnforceSystemReserved, "k8s.io/kubernetes/pkg/kubelet/types", "SystemReservedEnforcementKey"},
		{EnforceSystemReservedCompressed, "k8s.io/kubernetes/pkg/kubelet/types", "SystemReservedCompressibleEnforcementKey"},
		{EnforceKubeReserved, "k8s.io/kubernetes/pkg/kubelet/types", "KubeReservedEnforcementKey"},
		{EnforceKubeReservedCompressed, "k8s.io/kubernetes/pkg/kubelet/types", "KubeReservedCompressibleEnforcementKey"},
		{EnforceNone, "k8s.io/kubernetes/pkg/kubelet/types", "NodeAllocatableNoneKey"},
		{kubepodsName, "k8s.io/kubernetes/pkg/kubelet/cm", "defaultNodeAllocatableCgroupName"},
		{podPrefix, "k8s.io/kubernetes/pkg/kubelet/cm", "podCgroupNamePrefix"},
		{systemdSuffix, "k8s.io/kubernetes/pkg/kubelet/cm", "systemdSuffix"},
		{string(pidResource), "k8s.io/kubernetes/pkg/kubelet/stats/pidlimit", "PIDs"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
}
