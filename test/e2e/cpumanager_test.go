package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/node/cpumanager/state"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// TestCPUManagerStatic: with cpuManagerPolicy static and CPU 0 reserved, a
// Guaranteed pod asking for one CPU runs on CPU 1 alone (its container's
// cpuset cgroup), and a BestEffort pod on the shared pool, CPU 0, which the
// reconcile loop gives it if it started before; the checkpoint records
// both. A pod asking for more CPUs than are free is rejected as upstream.
func TestCPUManagerStatic(t *testing.T) {
	requireE2E(t)
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("this test reads cgroup v1 files; the host is cgroup v2")
	}
	if runtime.NumCPU() != 2 {
		t.Skipf("this test expects 2 CPUs, the host has %d", runtime.NumCPU())
	}
	n := newNode(t, "cpuManagerPolicy: static", `reservedSystemCPUs: "0"`, "cpuManagerReconcilePeriod: 1s")
	n.start()
	n.writeManifest("besteffort.yaml", qosPod("besteffort", ""))
	be := n.waitPod(fullName("besteffort"), "running", running)
	n.writeManifest("pinned.yaml", qosPod("pinned", `    resources:
      requests: {cpu: 1, memory: 64Mi}
      limits: {cpu: 1, memory: 64Mi}
`))
	pinned := n.waitPod(fullName("pinned"), "running", running)

	c := runtimeClient(t)
	if got := containerCPUs(t, c, pinned); got != "1" {
		t.Errorf("the Guaranteed pod's cpuset.cpus = %q, want 1", got)
	}
	n.waitFor("the BestEffort pod on the shared pool, CPU 0", func() bool { return containerCPUs(t, c, be) == "0" })

	cp, found, err := state.Read(n.rootDir)
	if err != nil || !found {
		t.Fatalf("read checkpoint: found %v, %v", found, err)
	}
	if cp.PolicyName != "static" || cp.DefaultCPUSet != "0" || cp.Entries[string(pinned.UID)]["main"] != "1" {
		t.Errorf("checkpoint = %+v, want policy static, shared 0, main of %s on 1", cp, pinned.UID)
	}

	n.writeManifest("toobig.yaml", qosPod("toobig", `    resources:
      requests: {cpu: 1, memory: 64Mi}
      limits: {cpu: 1, memory: 64Mi}
`))
	rejected := n.waitPod(fullName("toobig"), "rejected", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if rejected.Status.Reason != "UnexpectedAdmissionError" || !strings.Contains(rejected.Status.Message, "not enough cpus available to satisfy request: requested=1, available=0") {
		t.Errorf("rejected pod status = %q: %q", rejected.Status.Reason, rejected.Status.Message)
	}

	// The pinned pod goes: its CPU returns to the shared pool.
	n.removeManifest("pinned.yaml")
	n.waitNoPod(fullName("pinned"))
	n.waitFor("the BestEffort pod back on CPUs 0-1", func() bool { return containerCPUs(t, c, be) == "0-1" })
}

// containerCPUs returns cpuset.cpus of the cpuset cgroup of the pod's
// running container main, read on the host ("" when there is none).
func containerCPUs(t *testing.T, c *cri.Client, pod *corev1.Pod) string {
	t.Helper()
	_, containers := runtimeObjects(t, c, string(pod.UID))
	for _, ctr := range containers {
		if ctr.GetMetadata().GetName() != "main" || ctr.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		st, err := c.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: ctr.GetId(), Verbose: true})
		must(t, err)
		var info struct {
			Pid int `json:"pid"`
		}
		must(t, json.Unmarshal([]byte(st.GetInfo()["info"]), &info))
		lines, err := readFile(fmt.Sprintf("/proc/%d/cgroup", info.Pid))
		must(t, err)
		for _, line := range strings.Split(lines, "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && parts[1] == "cpuset" {
				cpus, err := readFile(filepath.Join("/sys/fs/cgroup/cpuset", parts[2], "cpuset.cpus"))
				must(t, err)
				return strings.TrimSpace(cpus)
			}
		}
	}
	return ""
}
