package cm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/cgroups"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
)

// TestMain puts github.com/opencontainers/cgroups in its test mode, the
// library's own seam for a fake cgroupfs: files are written in any
// directory (not only on a cgroup filesystem) and created when missing.
// It is the library's package variable, set once before any test runs.
func TestMain(m *testing.M) {
	cgroups.TestMode = true
	os.Exit(m.Run())
}

// fakeTree is a cgroupfs of directories and plain files: v1 with one mount
// per subsystem, or v2 with one. The library's Apply creates v1
// directories anywhere; v2 creation is pinned to /sys/fs/cgroup (it enables
// controllers on the way down), so on a v2 tree newManager replaces it
// with making the directory the kernel would.
type fakeTree struct {
	t      *testing.T
	root   string
	mounts map[string]string
}

func newFakeTree(t *testing.T, unified bool) *fakeTree {
	f := &fakeTree{t: t, root: t.TempDir(), mounts: map[string]string{}}
	if unified {
		f.mounts[unifiedKey] = f.root
	} else {
		for _, sub := range []string{"cpu", "memory", "pids"} {
			f.mounts[sub] = filepath.Join(f.root, sub)
		}
	}
	for _, m := range f.mounts {
		f.mkdir(m)
	}
	return f
}

// mkdir makes a cgroup directory as the kernel would: on v2 with its
// cgroup.controllers.
func (f *fakeTree) mkdir(dir string) {
	f.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if _, ok := f.mounts[unifiedKey]; ok {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

// newManager returns a Manager on f.
func (f *fakeTree) newManager(cfg Config) *Manager {
	f.t.Helper()
	m, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, ok := f.mounts[unifiedKey]; ok {
		m.fs.apply = func(_ cgroups.Manager, paths map[string]string) error {
			f.mkdir(paths[unifiedKey])
			return nil
		}
	}
	return m
}

// read returns a control file of cgroup dir under the mount of sub
// ("" on v2), or "-" when it does not exist.
func (f *fakeTree) read(sub, dir, file string) string {
	f.t.Helper()
	mount := f.mounts[unifiedKey]
	if m, ok := f.mounts[sub]; ok {
		mount = m
	}
	b, err := os.ReadFile(filepath.Join(mount, dir, file))
	if os.IsNotExist(err) {
		return "-"
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (f *fakeTree) exists(dir string) bool {
	for _, m := range f.mounts {
		if _, err := os.Stat(filepath.Join(m, dir)); err != nil {
			return false
		}
	}
	return true
}

// rmdirAsKernel removes the plain files of a cgroup directory, which the
// kernel does when the directory is removed; a plain directory needs it
// for rmdir to succeed.
func (f *fakeTree) rmdirAsKernel(dir string) {
	for _, m := range f.mounts {
		entries, _ := os.ReadDir(filepath.Join(m, dir))
		for _, e := range entries {
			if !e.IsDir() {
				_ = os.Remove(filepath.Join(m, dir, e.Name()))
			}
		}
	}
}

func testConfig(f *fakeTree) Config {
	return Config{
		Driver:                 DriverCgroupfs,
		Root:                   "/",
		EnforceNodeAllocatable: []string{EnforcePods},
		Capacity:               rl("cpu", "4", "memory", "8Gi", "pid", "100000"),
		SystemReserved:         rl("cpu", "500m", "memory", "1Gi"),
		KubeReserved:           rl("memory", "512Mi", "pid", "1000"),
		Pod:                    PodOptions{PidsLimit: 4096},
		Mounts:                 f.mounts,
	}
}

var (
	guaranteedTestPod = podWith("a", guaranteed("c", rl("cpu", "500m", "memory", "128Mi")))
	burstableTestPod  = podWith("b", ctr("c", rl("cpu", "250m", "memory", "64Mi"), rl("memory", "256Mi")))
	besteffortTestPod = podWith("c", ctr("c", nil, nil))
)

func TestManagerV1(t *testing.T) {
	f := newFakeTree(t, false)
	want := map[string]string{
		// kubepods: capacity less reserved; cpu shares of 4 - 0.5 cpus.
		"cpu kubepods cpu.shares":                                                              "3584",
		"memory kubepods memory.limit_in_bytes":                                                "6979321856",
		"pids kubepods pids.max":                                                               "99000",
		"cpu kubepods/burstable cpu.shares":                                                    "256",
		"cpu kubepods/besteffort cpu.shares":                                                   "2",
		"cpu kubepods/pod" + uidOf(guaranteedTestPod) + " cpu.shares":                          "512",
		"cpu kubepods/pod" + uidOf(guaranteedTestPod) + " cpu.cfs_quota_us":                    "50000",
		"cpu kubepods/pod" + uidOf(guaranteedTestPod) + " cpu.cfs_period_us":                   "100000",
		"memory kubepods/pod" + uidOf(guaranteedTestPod) + " memory.limit_in_bytes":            "134217728",
		"pids kubepods/pod" + uidOf(guaranteedTestPod) + " pids.max":                           "4096",
		"cpu kubepods/burstable/pod" + uidOf(burstableTestPod) + " cpu.shares":                 "256",
		"cpu kubepods/burstable/pod" + uidOf(burstableTestPod) + " cpu.cfs_quota_us":           "-",
		"memory kubepods/burstable/pod" + uidOf(burstableTestPod) + " memory.limit_in_bytes":   "268435456",
		"cpu kubepods/besteffort/pod" + uidOf(besteffortTestPod) + " cpu.shares":               "2",
		"memory kubepods/besteffort/pod" + uidOf(besteffortTestPod) + " memory.limit_in_bytes": "-",
	}
	runManager(t, f, want)
}

func TestManagerV2(t *testing.T) {
	f := newFakeTree(t, true)
	want := map[string]string{
		"kubepods cpu.weight":                                                "137", // CPUWeight(3584)
		"kubepods memory.max":                                                "6979321856",
		"kubepods pids.max":                                                  "99000",
		"kubepods/burstable cpu.weight":                                      "10",
		"kubepods/besteffort cpu.weight":                                     "1",
		"kubepods/pod" + uidOf(guaranteedTestPod) + " cpu.weight":            "20",
		"kubepods/pod" + uidOf(guaranteedTestPod) + " cpu.max":               "50000 100000",
		"kubepods/pod" + uidOf(guaranteedTestPod) + " memory.max":            "134217728",
		"kubepods/pod" + uidOf(guaranteedTestPod) + " pids.max":              "4096",
		"kubepods/burstable/pod" + uidOf(burstableTestPod) + " memory.max":   "268435456",
		"kubepods/burstable/pod" + uidOf(burstableTestPod) + " cpu.max":      "-",
		"kubepods/besteffort/pod" + uidOf(besteffortTestPod) + " cpu.weight": "1",
		"kubepods/besteffort/pod" + uidOf(besteffortTestPod) + " memory.max": "-",
	}
	runManager(t, f, want)
}

func uidOf(p *corev1.Pod) string { return string(p.UID) }

// runManager starts a Manager on f, ensures the three test pods, compares
// the files of want ("[subsystem ]dir file" -> content), then removes the
// pods one by one as housekeeping would.
func runManager(t *testing.T, f *fakeTree, want map[string]string) {
	_, ctx := ktesting.NewTestContext(t)
	m := f.newManager(testConfig(f))
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pods := []*corev1.Pod{guaranteedTestPod, burstableTestPod, besteffortTestPod}
	for i, p := range pods {
		if err := m.EnsurePod(ctx, p, pods[:i]); err != nil {
			t.Fatalf("EnsurePod(%s): %v", p.Name, err)
		}
	}
	got := map[string]string{}
	for key := range want {
		parts := strings.Fields(key)
		if len(parts) == 2 {
			parts = append([]string{""}, parts...)
		}
		got[key] = f.read(parts[0], parts[1], parts[2])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup files (-want +got):\n%s", diff)
	}

	// Orphans: the burstable pod is gone, the others are not.
	gone := map[types.UID]bool{burstableTestPod.UID: true}
	burstDir := "kubepods/burstable/pod" + uidOf(burstableTestPod)
	f.rmdirAsKernel(burstDir)
	active := []*corev1.Pod{guaranteedTestPod, besteffortTestPod}
	if err := m.Cleanup(ctx, active, func(uid types.UID) bool { return gone[uid] }); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if f.exists(burstDir) {
		t.Errorf("%s still exists after its pod is gone", burstDir)
	}
	for _, dir := range []string{"kubepods/pod" + uidOf(guaranteedTestPod), "kubepods/besteffort/pod" + uidOf(besteffortTestPod), "kubepods/burstable"} {
		if !f.exists(dir) {
			t.Errorf("%s was removed; its pod is not gone", dir)
		}
	}
	if _, unified := f.mounts[unifiedKey]; unified {
		if got := f.read("", "kubepods/burstable", "cpu.weight"); got != "1" {
			t.Errorf("burstable cpu.weight = %s after its only pod went, want 1", got)
		}
	} else if got := f.read("cpu", "kubepods/burstable", "cpu.shares"); got != "2" {
		t.Errorf("burstable cpu.shares = %s after its only pod went, want 2", got)
	}
	// The parent for the runtime.
	parent, err := m.PodCgroupParent(burstableTestPod)
	if want := "/kubepods/burstable/pod" + uidOf(burstableTestPod); err != nil || parent != want {
		t.Errorf("PodCgroupParent = %q, %v; want %q", parent, err, want)
	}
}

func TestStartNeedsRoot(t *testing.T) {
	f := newFakeTree(t, false)
	cfg := testConfig(f)
	cfg.Root = "/missing"
	m := f.newManager(cfg)
	_, ctx := ktesting.NewTestContext(t)
	if err := m.Start(ctx); err == nil || !strings.Contains(err.Error(), `"/missing"`) {
		t.Errorf("Start = %v; want an error naming the missing cgroup root", err)
	}
}

func TestReservedCgroupsEnforced(t *testing.T) {
	f := newFakeTree(t, false)
	cfg := testConfig(f)
	cfg.EnforceNodeAllocatable = []string{EnforcePods, EnforceSystemReservedCompressed, EnforceKubeReserved}
	cfg.SystemReservedCgroup, cfg.KubeReservedCgroup = "/system.slice", "/kube.slice"
	// The MemoryQoS gate asks memory.min of reserved cgroups, which a
	// cgroup v1 host does not write.
	cfg.Pod.Memory.QoS = true
	_, ctx := ktesting.NewTestContext(t)
	m := f.newManager(cfg)
	if err := m.Start(ctx); err == nil || !strings.Contains(err.Error(), "/system.slice") {
		t.Fatalf("Start = %v; want an error naming the missing reserved cgroup", err)
	}
	for _, m := range f.mounts {
		for _, d := range []string{"system.slice", "kube.slice"} {
			f.mkdir(filepath.Join(m, d))
		}
	}
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	got := map[string]string{
		"system cpu":    f.read("cpu", "system.slice", "cpu.shares"),
		"system memory": f.read("memory", "system.slice", "memory.limit_in_bytes"),
		"kube cpu":      f.read("cpu", "kube.slice", "cpu.shares"),
		"kube memory":   f.read("memory", "kube.slice", "memory.limit_in_bytes"),
		"kube pids":     f.read("pids", "kube.slice", "pids.max"),
		"kube min":      f.read("memory", "kube.slice", "memory.min"),
	}
	want := map[string]string{"system cpu": "512", "system memory": "-", "kube cpu": "-", "kube memory": "536870912", "kube pids": "1000", "kube min": "-"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reserved cgroups (-want +got):\n%s", diff)
	}
}

// TestAllocatableRetried: kubepods' limits that cannot be set (pods using
// more than them, say) do not stop Start; Cleanup sets them later.
func TestAllocatableRetried(t *testing.T) {
	f := newFakeTree(t, false)
	limitFile := filepath.Join(f.mounts["memory"], "kubepods", "memory.limit_in_bytes")
	// A directory where the control file is: writing it fails.
	must(t, os.MkdirAll(limitFile, 0o755))
	_, ctx := ktesting.NewTestContext(t)
	m := f.newManager(testConfig(f))
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := f.read("cpu", "kubepods/burstable", "cpu.shares"); got != "2" {
		t.Errorf("burstable cpu.shares = %s after Start, want 2", got)
	}
	must(t, os.Remove(limitFile))
	if err := m.Cleanup(ctx, nil, func(types.UID) bool { return false }); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if got := f.read("memory", "kubepods", "memory.limit_in_bytes"); got != "6979321856" {
		t.Errorf("kubepods memory.limit_in_bytes = %s after Cleanup, want 6979321856", got)
	}
}

func TestMemoryCgroups(t *testing.T) {
	type result struct {
		Root, Pods string
		OK         bool
	}
	v1 := newFakeTree(t, false)
	systemd := testConfig(v1)
	systemd.Driver = DriverSystemd
	v2 := newFakeTree(t, true)
	mem := filepath.Join(v1.root, "memory")
	tests := []struct {
		name string
		m    *Manager
		want result
	}{
		{"v1 cgroupfs", v1.newManager(testConfig(v1)), result{mem, filepath.Join(mem, "kubepods"), true}},
		{"v1 systemd", v1.newManager(systemd), result{mem, filepath.Join(mem, "kubepods.slice"), true}},
		{"v2: no memcg notifications", v2.newManager(testConfig(v2)), result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			got.Root, got.Pods, got.OK = tt.m.MemoryCgroups()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MemoryCgroups (-want +got):\n%s", diff)
			}
		})
	}
}
