package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// v1Mounts are the cgroup v1 hierarchies the test makes its cgroupRoot in
// (the machine is cgroup v1; a v2 host runs the test under /sys/fs/cgroup).
var v1Mounts = []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "devices", "freezer", "hugetlb", "systemd"}

// cgroupRootForTest makes a cgroupRoot of the test's own, so that the
// kubepods hierarchy it checks is nobody else's, and removes it (deepest
// first) when the test ends.
func cgroupRootForTest(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("berth-e2e-cgroups-%d", os.Getpid())
	var dirs []string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dirs = []string{filepath.Join("/sys/fs/cgroup", name)}
	} else {
		for _, m := range v1Mounts {
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", m)); err == nil {
				dirs = append(dirs, filepath.Join("/sys/fs/cgroup", m, name))
			}
		}
	}
	for _, d := range dirs {
		must(t, os.MkdirAll(d, 0o755))
		if filepath.Base(filepath.Dir(d)) == "cpuset" {
			// A new cpuset cgroup has no cpus or mems: give it its parent's.
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				v, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
				must(t, err)
				must(t, os.WriteFile(filepath.Join(d, f), v, 0o644))
			}
		}
	}
	// On a hybrid host berth (as the library) also makes the pod cgroups in
	// the unified hierarchy, where runc puts the containers.
	cleanup := dirs
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil {
		cleanup = append(cleanup, filepath.Join("/sys/fs/cgroup/unified", name))
	}
	t.Cleanup(func() {
		for _, d := range cleanup {
			removeCgroupTree(t, d)
		}
	})
	return "/" + name
}

// removeCgroupTree removes a cgroup directory and its children, deepest
// first (cgroupfs removes directories with rmdir only).
func removeCgroupTree(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeCgroupTree(t, filepath.Join(dir, e.Name()))
		}
	}
	for i := 0; i < 50; i++ {
		if err = os.Remove(dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("remove cgroup %s: %v", dir, err)
}

func qosPod(name, resources string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
%s`, name, busybox, resources)
}

// cgroupFile reads a control file of the v1 hierarchy sub.
func cgroupFile(t *testing.T, sub, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", sub, dir, file))
	if err != nil {
		t.Errorf("read %s: %v", filepath.Join(sub, dir, file), err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TestQoSCgroups: a Guaranteed, a Burstable and a BestEffort pod land in
// their QoS cgroups under <cgroupRoot>/kubepods with upstream's limits;
// kubepods is limited to capacity less systemReserved; a deleted pod's
// cgroup goes, also when it went while berth was down.
func TestQoSCgroups(t *testing.T) {
	requireE2E(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this test reads cgroup v1 files; the host is cgroup v2")
	}
	root := cgroupRootForTest(t)
	n := newNode(t, "cgroupRoot: "+root, "podPidsLimit: 100", "systemReserved:", "  memory: 1Gi")
	n.start()
	kubepods := root + "/kubepods"

	memTotal := readMemTotal(t)
	limit := (memTotal - 1<<30) &^ 4095 // the kernel rounds down to pages
	if got := cgroupFile(t, "memory", kubepods, "memory.limit_in_bytes"); got != strconv.FormatInt(limit, 10) {
		t.Errorf("kubepods memory.limit_in_bytes = %s, want capacity %d - 1Gi = %d", got, memTotal, limit)
	}

	n.writeManifest("guaranteed.yaml", qosPod("guaranteed", `    resources:
      requests: {cpu: 200m, memory: 64Mi}
      limits: {cpu: 200m, memory: 64Mi}
`))
	n.writeManifest("burstable.yaml", qosPod("burstable", `    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {memory: 128Mi}
`))
	n.writeManifest("besteffort.yaml", qosPod("besteffort", ""))
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"guaranteed", "burstable", "besteffort"} {
		pods[name] = n.waitPod(fullName(name), "running", running)
	}
	dirs := map[string]string{
		"guaranteed": kubepods + "/pod" + string(pods["guaranteed"].UID),
		"burstable":  kubepods + "/burstable/pod" + string(pods["burstable"].UID),
		"besteffort": kubepods + "/besteffort/pod" + string(pods["besteffort"].UID),
	}
	for _, tt := range []struct{ sub, dir, file, want string }{
		{"cpu", dirs["guaranteed"], "cpu.shares", "204"},
		{"cpu", dirs["guaranteed"], "cpu.cfs_quota_us", "20000"},
		{"memory", dirs["guaranteed"], "memory.limit_in_bytes", "67108864"},
		{"pids", dirs["guaranteed"], "pids.max", "100"},
		{"cpu", dirs["burstable"], "cpu.shares", "102"},
		{"cpu", dirs["burstable"], "cpu.cfs_quota_us", "-1"},
		{"memory", dirs["burstable"], "memory.limit_in_bytes", "134217728"},
		{"cpu", dirs["besteffort"], "cpu.shares", "2"},
		{"memory", dirs["besteffort"], "memory.limit_in_bytes", "9223372036854771712"},
		{"cpu", kubepods + "/burstable", "cpu.shares", "102"},
		{"cpu", kubepods + "/besteffort", "cpu.shares", "2"},
	} {
		if got := cgroupFile(t, tt.sub, tt.dir, tt.file); got != tt.want {
			t.Errorf("%s/%s = %s, want %s", tt.dir, tt.file, got, tt.want)
		}
	}
	// The runtime put the pods' containers in their pod cgroups.
	for name, dir := range dirs {
		if !hasChildCgroup(filepath.Join("/sys/fs/cgroup/memory", dir)) {
			t.Errorf("pod %s: no container cgroup under %s", name, dir)
		}
	}
	gone := func(dir string) func() bool {
		return func() bool {
			for _, mount := range []string{"memory", "cpu", "pids", "unified"} {
				if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", mount, dir)); !os.IsNotExist(err) {
					return false
				}
			}
			return true
		}
	}

	n.removeManifest("burstable.yaml")
	n.waitNoPod(fullName("burstable"))
	n.waitFor("the burstable pod's cgroup to go", gone(dirs["burstable"]))
	n.waitFor("the burstable QoS shares to drop", func() bool {
		return cgroupFile(t, "cpu", kubepods+"/burstable", "cpu.shares") == "2"
	})

	// While berth is down the besteffort pod's manifest goes, and a pod
	// cgroup of no pod at all is left behind: after the restart both
	// cgroups go, and the guaranteed pod keeps its own.
	n.stop()
	n.removeManifest("besteffort.yaml")
	stray := kubepods + "/besteffort/pod6c3f0a52-1d1e-4f0e-9a55-0d6f3b3c1e2a"
	for _, mount := range []string{"memory", "cpu", "pids"} {
		must(t, os.Mkdir(filepath.Join("/sys/fs/cgroup", mount, stray), 0o755))
	}
	n.start()
	n.waitFor("the besteffort pod's cgroup to go after a restart", gone(dirs["besteffort"]))
	n.waitFor("a stray pod cgroup to go after a restart", gone(stray))
	if got := cgroupFile(t, "memory", dirs["guaranteed"], "memory.limit_in_bytes"); got != "67108864" {
		t.Errorf("guaranteed pod's memory limit after a restart = %s, want 67108864", got)
	}
	n.removeManifest("guaranteed.yaml")
	n.waitFor("the guaranteed pod's cgroup to go", gone(dirs["guaranteed"]))
}

func hasChildCgroup(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			return true
		}
	}
	return false
}

func readMemTotal(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/meminfo")
	must(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			must(t, err)
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

// TestKubeletCgroups: berth moves itself into kubeletCgroups (made when
// missing).
func TestKubeletCgroups(t *testing.T) {
	requireE2E(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this test reads cgroup v1 files; the host is cgroup v2")
	}
	if _, err := os.Readlink("/proc/1/ns/pid"); err != nil {
		// berth, as upstream, moves itself only when it can tell it runs in
		// the host's PID namespace; here init's namespace cannot be read.
		t.Skipf("cannot read init's pid namespace: %v", err)
	}
	name := fmt.Sprintf("/berth-e2e-kubelet-%d", os.Getpid())
	t.Cleanup(func() { // after berth has stopped (cleanups run last first)
		for _, m := range append(v1Mounts, "unified") {
			removeCgroupTree(t, filepath.Join("/sys/fs/cgroup", m, name))
		}
	})
	n := newNode(t, "kubeletCgroups: "+name)
	n.start()
	pid := n.cmd.Process.Pid
	cgroupLines, err := readFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	must(t, err)
	for _, sub := range []string{"memory", "cpu,cpuacct", "pids"} {
		if !strings.Contains(cgroupLines, ":"+sub+":"+name+"\n") {
			t.Errorf("berth (pid %d) is not in %s for %s:\n%s", pid, name, sub, cgroupLines)
		}
	}
}
