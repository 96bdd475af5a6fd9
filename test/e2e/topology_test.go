package e2e

import (
	"os"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTopologyManagerSingleNUMANode: with topologyManagerPolicy
// single-numa-node (pod scope) over the static CPU manager with CPU 0
// reserved, a Guaranteed pod asking for one CPU is aligned to the host's
// NUMA node and runs on CPU 1; one asking for a CPU more than are free has
// no NUMA node to fit and is refused by the topology manager, as upstream
// (TopologyAffinityError, not the CPU manager's UnexpectedAdmissionError).
func TestTopologyManagerSingleNUMANode(t *testing.T) {
	requireE2E(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this test reads cgroup v1 files; the host is cgroup v2")
	}
	if runtime.NumCPU() != 2 {
		t.Skipf("this test expects 2 CPUs, the host has %d", runtime.NumCPU())
	}
	n := newNode(t, "cpuManagerPolicy: static", `reservedSystemCPUs: "0"`,
		"topologyManagerPolicy: single-numa-node", "topologyManagerScope: pod")
	n.start()
	guaranteed := `    resources:
      requests: {cpu: 1, memory: 64Mi}
      limits: {cpu: 1, memory: 64Mi}
`
	n.writeManifest("aligned.yaml", qosPod("aligned", guaranteed))
	aligned := n.waitPod(fullName("aligned"), "running", running)
	if got := containerCPUs(t, runtimeClient(t), aligned); got != "1" {
		t.Errorf("the aligned pod's cpuset.cpus = %q, want 1", got)
	}

	n.writeManifest("unaligned.yaml", qosPod("unaligned", guaranteed))
	rejected := n.waitPod(fullName("unaligned"), "rejected", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if rejected.Status.Reason != "TopologyAffinityError" || rejected.Status.Message != "Pod was rejected: Resources cannot be allocated with Topology locality" {
		t.Errorf("rejected pod status = %q: %q", rejected.Status.Reason, rejected.Status.Message)
	}
}
