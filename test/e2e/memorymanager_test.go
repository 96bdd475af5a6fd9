package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/platform/cri"
)

// TestMemoryManagerStatic: with memoryManagerPolicy Static and the hard
// eviction threshold reserved on NUMA node 0, a Guaranteed pod's
// container is created with cpuset.mems 0 (its OCI spec, as containerd
// built it from the CRI request), the checkpoint records its 64Mi block,
// and a pod whose memory no NUMA node holds is rejected as upstream.
func TestMemoryManagerStatic(t *testing.T) {
	requireE2E(t)
	n := newNode(t, "memoryManagerPolicy: Static", "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]")
	n.start()
	n.writeManifest("bound.yaml", qosPod("bound", `    resources:
      limits: {cpu: 100m, memory: 64Mi}
`))
	bound := n.waitPod(fullName("bound"), "running", running)
	if got := containerMems(t, runtimeClient(t), bound); got != "0" {
		t.Errorf("the Guaranteed pod's container spec has cpuset.mems %q, want 0", got)
	}
	cp, found, err := state.Read(n.rootDir)
	if err != nil || !found {
		t.Fatalf("read checkpoint: found %v, %v", found, err)
	}
	blocks := cp.Entries[string(bound.UID)]["main"]
	if cp.PolicyName != "Static" || len(blocks) != 1 || blocks[0].Size != 64<<20 || blocks[0].Type != corev1.ResourceMemory {
		t.Errorf("checkpoint = %+v, want policy Static and main of %s with 64Mi on node 0", cp, bound.UID)
	}

	n.writeManifest("toobig.yaml", qosPod("toobig", `    resources:
      limits: {cpu: 100m, memory: 1000Gi}
`))
	rejected := n.waitPod(fullName("toobig"), "rejected", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if rejected.Status.Reason != "UnexpectedAdmissionError" || !strings.Contains(rejected.Status.Message, "no NUMA nodes with enough memory is available") {
		t.Errorf("rejected pod status = %q: %q", rejected.Status.Reason, rejected.Status.Message)
	}
}

// containerMems returns linux.resources.cpu.mems of the OCI spec of the
// pod's running container main, from the runtime's verbose status.
func containerMems(t *testing.T, c *cri.Client, pod *corev1.Pod) string {
	t.Helper()
	_, containers := runtimeObjects(t, c, string(pod.UID))
	for _, ctr := range containers {
		if ctr.GetMetadata().GetName() != "main" || ctr.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		st, err := c.Runtime.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: ctr.GetId(), Verbose: true})
		must(t, err)
		var info struct {
			RuntimeSpec struct {
				Linux struct {
					Resources struct {
						CPU struct {
							Mems string `json:"mems"`
						} `json:"cpu"`
					} `json:"resources"`
				} `json:"linux"`
			} `json:"runtimeSpec"`
		}
		must(t, json.Unmarshal([]byte(st.GetInfo()["info"]), &info))
		return info.RuntimeSpec.Linux.Resources.CPU.Mems
	}
	return ""
}
