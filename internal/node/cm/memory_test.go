package cm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
)

var (
	qosOn     = cgroupmath.MemorySettings{CgroupV2: true, QoS: true, ThrottlingFactor: ptr.To(0.9), PageSize: 4096}
	qosTiered = cgroupmath.MemorySettings{CgroupV2: true, QoS: true, ThrottlingFactor: ptr.To(0.9), PageSize: 4096, TieredReservation: true}
)

// withPodLimit gives p pod-level resources.
func withPodLimit(p *corev1.Pod, requests, limits corev1.ResourceList) *corev1.Pod {
	p.Spec.Resources = &corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return p
}

func TestForPodMemoryQoS(t *testing.T) {
	v1Tiered := qosTiered
	v1Tiered.CgroupV2 = false
	gateOff := qosTiered
	gateOff.QoS = false
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		mem  cgroupmath.MemorySettings
		want map[string]string
	}{
		{"guaranteed, tiered: memory.min", podWith("g", guaranteed("a", rl("cpu", "1", "memory", "128Mi"))), qosTiered,
			map[string]string{"memory.min": "134217728"}},
		{"burstable, tiered: memory.low", podWith("b", ctr("a", rl("memory", "64Mi"), rl("memory", "256Mi"))), qosTiered,
			map[string]string{"memory.low": "67108864"}},
		{"besteffort, tiered: nothing", podWith("e", ctr("a", nil, nil)), qosTiered, nil},
		{"burstable, policy None: nothing", podWith("b", ctr("a", rl("memory", "64Mi"), rl("memory", "256Mi"))), qosOn, nil},
		{"pod-level limit: memory.high", withPodLimit(podWith("b", ctr("a", nil, nil)), rl("memory", "128Mi"), rl("memory", "256Mi")), qosOn,
			map[string]string{"memory.high": "255012864"}},
		{"pod-level limit, no factor", withPodLimit(podWith("b", ctr("a", nil, nil)), rl("memory", "128Mi"), rl("memory", "256Mi")),
			cgroupmath.MemorySettings{CgroupV2: true, QoS: true}, nil},
		{"pod-level request = limit: no memory.high", withPodLimit(podWith("g", ctr("a", nil, nil)), rl("cpu", "1", "memory", "256Mi"), rl("cpu", "1", "memory", "256Mi")), qosOn, nil},
		{"container limits only: no memory.high", podWith("b", ctr("a", rl("memory", "64Mi"), rl("memory", "256Mi"))), qosOn, nil},
		{"cgroup v1: nothing", podWith("g", guaranteed("a", rl("cpu", "1", "memory", "128Mi"))), v1Tiered, nil},
		{"MemoryQoS off: nothing", podWith("g", guaranteed("a", rl("cpu", "1", "memory", "128Mi"))), gateOff, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ForPod(tt.pod, PodOptions{Memory: tt.mem}).Unified
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ForPod(...).Unified (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForQOS(t *testing.T) {
	burst1 := podWith("1", ctr("a", rl("cpu", "250m", "memory", "100Mi"), nil))
	burst2 := podWith("2", ctr("a", rl("cpu", "1", "memory", "1Mi"), nil))
	guaranteedPod := podWith("3", guaranteed("a", rl("cpu", "4", "memory", "1Gi")))
	besteffort := podWith("4", ctr("a", nil, nil))
	all := []*corev1.Pod{burst1, guaranteedPod, burst2, besteffort}
	withAlloc := func(s cgroupmath.MemorySettings) cgroupmath.MemorySettings {
		s.AllocatableMemory = 8 << 30
		return s
	}
	shares := func(b uint64) QOSResources {
		return QOSResources{Burstable: Resources{CPUShares: ptr.To(b)}, BestEffort: Resources{CPUShares: ptr.To[uint64](2)}}
	}
	tiered := shares(1280)
	tiered.Kubepods.Unified = map[string]string{"memory.min": "1179648000", "memory.low": "105906176"}
	tiered.Burstable.Unified = map[string]string{"memory.low": "105906176"}
	reserved := shares(1280)
	reserved.Burstable.Memory = ptr.To[int64](8<<30 - (1<<30)/2)
	reserved.BestEffort.Memory = ptr.To[int64](8<<30 - (1<<30)/2 - 105906176/2)
	for _, tt := range []struct {
		name string
		pods []*corev1.Pod
		opts QOSOptions
		want QOSResources
	}{
		{"none: MinShares", nil, QOSOptions{}, shares(2)},
		{"guaranteed and besteffort do not count for cpu", []*corev1.Pod{guaranteedPod, besteffort}, QOSOptions{}, shares(2)},
		{"burstable requests summed", all, QOSOptions{}, shares(1280)},
		{"policy None: no protection", all, QOSOptions{Memory: qosOn}, shares(1280)},
		{"tiered: memory.min and memory.low", all, QOSOptions{Memory: qosTiered}, tiered},
		{"qosReserved memory 50%", all, QOSOptions{Memory: withAlloc(cgroupmath.MemorySettings{}), ReservedMemoryPercent: ptr.To[int64](50)}, reserved},
		{"qosReserved without allocatable: no limits", all, QOSOptions{ReservedMemoryPercent: ptr.To[int64](50)}, shares(1280)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ForQOS(tt.pods, tt.opts)); diff != "" {
				t.Errorf("ForQOS (-want +got):\n%s", diff)
			}
		})
	}
}

// TestManagerMemoryQoSV2 runs the manager with TieredReservation, a
// throttling factor and qosReserved on a fake cgroup v2 tree.
func TestManagerMemoryQoSV2(t *testing.T) {
	f := newFakeTree(t, true)
	_, ctx := ktesting.NewTestContext(t)
	cfg := testConfig(f)
	cfg.Pod.Memory = qosTiered
	cfg.QOSReservedMemory = ptr.To[int64](100)
	m := f.newManager(cfg)
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	podLevel := withPodLimit(podWith("d", ctr("c", nil, nil)), rl("memory", "128Mi"), rl("memory", "256Mi"))
	pods := []*corev1.Pod{guaranteedTestPod, burstableTestPod, besteffortTestPod, podLevel}
	for i, p := range pods {
		if err := m.EnsurePod(ctx, p, pods[:i]); err != nil {
			t.Fatalf("EnsurePod(%s): %v", p.Name, err)
		}
	}
	// Allocatable 8Gi - 1Gi - 512Mi = 6979321856; Guaranteed 128Mi,
	// Burstable 64Mi + 128Mi.
	want := map[string]string{
		"kubepods memory.min":                                              "335544320",
		"kubepods memory.low":                                              "201326592",
		"kubepods/burstable memory.low":                                    "201326592",
		"kubepods/burstable memory.max":                                    "6845104128",
		"kubepods/besteffort memory.max":                                   "6643777536",
		"kubepods/pod" + uidOf(guaranteedTestPod) + " memory.min":          "134217728",
		"kubepods/burstable/pod" + uidOf(burstableTestPod) + " memory.low": "67108864",
		"kubepods/burstable/pod" + uidOf(podLevel) + " memory.low":         "134217728",
		"kubepods/burstable/pod" + uidOf(podLevel) + " memory.high":        "255012864",
		"kubepods/burstable/pod" + uidOf(podLevel) + " memory.max":         "268435456",
	}
	got := map[string]string{}
	for key := range want {
		parts := strings.Fields(key)
		got[key] = f.read("", parts[0], parts[1])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup files (-want +got):\n%s", diff)
	}
}

// TestManagerStaleProtectionReset: on cgroup v2 with the policy None,
// Start resets the protection an earlier configuration left.
func TestManagerStaleProtectionReset(t *testing.T) {
	f := newFakeTree(t, true)
	_, ctx := ktesting.NewTestContext(t)
	cfg := testConfig(f)
	cfg.Pod.Memory = qosOn
	f.mkdir(filepath.Join(f.root, "kubepods"))
	f.mkdir(filepath.Join(f.root, "kubepods", "burstable"))
	f.write("kubepods", "memory.min", "999")
	f.write("kubepods/burstable", "memory.low", "999")
	if err := f.newManager(cfg).Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	for _, c := range [][2]string{{"kubepods", "memory.min"}, {"kubepods", "memory.low"}, {"kubepods/burstable", "memory.low"}} {
		if got := f.read("", c[0], c[1]); got != "0" {
			t.Errorf("%s %s = %s, want 0", c[0], c[1], got)
		}
	}
}

// TestManagerMemoryQoSV1 holds that nothing of memory QoS reaches a
// cgroup v1 tree, and that qosReserved limits do.
func TestManagerMemoryQoSV1(t *testing.T) {
	f := newFakeTree(t, false)
	_, ctx := ktesting.NewTestContext(t)
	cfg := testConfig(f)
	cfg.Pod.Memory = qosTiered
	cfg.Pod.Memory.CgroupV2 = false
	cfg.QOSReservedMemory = ptr.To[int64](100)
	m := f.newManager(cfg)
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := m.EnsurePod(ctx, guaranteedTestPod, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read("memory", "kubepods/pod"+uidOf(guaranteedTestPod), "memory.min"); got != "-" {
		t.Errorf("memory.min written on cgroup v1: %s", got)
	}
	if got, want := f.read("memory", "kubepods/burstable", "memory.limit_in_bytes"), "6845104128"; got != want {
		t.Errorf("burstable memory.limit_in_bytes = %s, want %s", got, want)
	}
}

// write writes a control file of cgroup dir on a v2 tree.
func (f *fakeTree) write(dir, file, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.mounts[unifiedKey], dir, file), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// TestReservedMemoryMinV2: with the MemoryQoS gate, a reserved cgroup on
// cgroup v2 gets memory.min = its reserved memory.
func TestReservedMemoryMinV2(t *testing.T) {
	f := newFakeTree(t, true)
	cfg := testConfig(f)
	cfg.EnforceNodeAllocatable = []string{EnforcePods, EnforceKubeReserved}
	cfg.KubeReservedCgroup = "/kube.slice"
	cfg.Pod.Memory = qosOn
	f.mkdir(filepath.Join(f.root, "kube.slice"))
	_, ctx := ktesting.NewTestContext(t)
	if err := f.newManager(cfg).Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := f.read("", "kube.slice", "memory.min"); got != "536870912" {
		t.Errorf("kube.slice memory.min = %s, want 536870912", got)
	}
}

func TestCapToUsage(t *testing.T) {
	for _, tt := range []struct {
		name  string
		r     Resources
		usage int64
		want  Resources
	}{
		{"usage above the limit: the usage", Resources{Memory: ptr.To[int64](100)}, 150, Resources{Memory: ptr.To[int64](150)}},
		{"usage below: unchanged", Resources{Memory: ptr.To[int64](100)}, 50, Resources{Memory: ptr.To[int64](100)}},
		{"no limit: unchanged", Resources{CPUShares: ptr.To[uint64](2)}, 50, Resources{CPUShares: ptr.To[uint64](2)}},
	} {
		if diff := cmp.Diff(tt.want, capToUsage(tt.r, tt.usage)); diff != "" {
			t.Errorf("%s: capToUsage (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestMemoryUsage reads a QoS cgroup's usage from the file each cgroup
// version keeps it in.
func TestMemoryUsage(t *testing.T) {
	for _, unified := range []bool{false, true} {
		f := newFakeTree(t, unified)
		m := f.newManager(testConfig(f))
		name := m.cfg.qosName(corev1.PodQOSBurstable)
		dir, file := filepath.Join(f.mounts["memory"], "kubepods", "burstable"), "memory.usage_in_bytes"
		if unified {
			dir, file = filepath.Join(f.root, "kubepods", "burstable"), "memory.current"
		}
		if _, err := m.fs.memoryUsage(name); err == nil {
			t.Errorf("unified=%t: memoryUsage of a missing cgroup: no error", unified)
		}
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, file), []byte("12345\n"), 0o644))
		if got, err := m.fs.memoryUsage(name); err != nil || got != 12345 {
			t.Errorf("unified=%t: memoryUsage = %d, %v; want 12345", unified, got, err)
		}
	}
}
