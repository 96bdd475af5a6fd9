package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestQOSReservedAndSwapV1: on a cgroup v1 host, qosReserved (with the
// QOSReserved gate) limits the burstable and besteffort QoS cgroups'
// memory as upstream, and where the kernel accounts swap a container ends
// with a memory+swap limit equal to its memory limit (NoSwap); memory QoS,
// cgroup v2 only, writes nothing here. (containerd sets that memory+swap
// limit itself when the CRI asks none, so the check holds the end state,
// not berth's part of it: containerconfig's table tests hold that.)
func TestQOSReservedAndSwapV1(t *testing.T) {
	requireE2E(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this test reads cgroup v1 files; the host is cgroup v2")
	}
	root := cgroupRootForTest(t)
	n := newNode(t, "cgroupRoot: "+root, "systemReserved:", "  memory: 1Gi",
		"qosReserved:", "  memory: 100%", "featureGates:", "  QOSReserved: true",
		"memoryThrottlingFactor: 0.8", "memoryReservationPolicy: TieredReservation")
	n.start()
	kubepods := root + "/kubepods"

	n.writeManifest("guaranteed.yaml", qosPod("guaranteed", `    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
`))
	n.writeManifest("burstable.yaml", qosPod("burstable", `    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {memory: 128Mi}
`))
	pods := map[string]*corev1.Pod{}
	for _, name := range []string{"guaranteed", "burstable"} {
		pods[name] = n.waitPod(fullName(name), "running", running)
	}
	// Allocatable memory is capacity less systemReserved; the kernel
	// rounds limits down to pages.
	alloc := readMemTotal(t) - 1<<30
	burstable := (alloc - 64<<20) &^ 4095
	besteffort := (alloc - 64<<20 - 32<<20) &^ 4095
	n.waitFor("the QoS cgroups' qosReserved memory limits", func() bool {
		return cgroupFile(t, "memory", kubepods+"/burstable", "memory.limit_in_bytes") == strconv.FormatInt(burstable, 10) &&
			cgroupFile(t, "memory", kubepods+"/besteffort", "memory.limit_in_bytes") == strconv.FormatInt(besteffort, 10)
	})

	podDir := filepath.Join("/sys/fs/cgroup/memory", kubepods, "burstable", "pod"+string(pods["burstable"].UID))
	ctr := containerCgroup(t, podDir)
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"); err == nil {
		if got := cgroupFile(t, "memory", ctr, "memory.memsw.limit_in_bytes"); got != "134217728" {
			t.Errorf("burstable container memory.memsw.limit_in_bytes = %s, want its memory limit 134217728", got)
		}
	}
	for _, f := range []string{"memory.min", "memory.low", "memory.high"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", ctr, f)); err == nil {
			t.Errorf("%s exists in a cgroup v1 container cgroup", f)
		}
	}

	// The pods go before the test's cgroupRoot is removed.
	for name, pod := range pods {
		n.removeManifest(name + ".yaml")
		n.waitNoPod(fullName(name))
		dir := kubepods + "/pod" + string(pod.UID)
		if name == "burstable" {
			dir = kubepods + "/burstable/pod" + string(pod.UID)
		}
		n.waitFor("the "+name+" pod's cgroup to go", func() bool {
			_, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", dir))
			return os.IsNotExist(err)
		})
	}
}

// containerCgroup returns the cgroup (below the memory mount) of the
// container under podDir with the lowest memory limit: the limited
// container rather than the unlimited sandbox.
func containerCgroup(t *testing.T, podDir string) string {
	t.Helper()
	entries, err := os.ReadDir(podDir)
	must(t, err)
	var best string
	var bestLimit int64
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(podDir, e.Name(), "memory.limit_in_bytes"))
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			continue
		}
		if best == "" || v < bestLimit {
			best, bestLimit = e.Name(), v
		}
	}
	if best == "" {
		t.Fatalf("no container cgroup under %s", podDir)
	}
	rel, err := filepath.Rel("/sys/fs/cgroup/memory", filepath.Join(podDir, best))
	must(t, err)
	return "/" + rel
}
