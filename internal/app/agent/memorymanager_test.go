package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2/ktesting"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/node/memorymanager"
	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/machine"
)

// TestMemoryManagerCheckpoint: berth's start writes
// <root-dir>/memory_manager_state with its policy, None, and refuses to
// start over a checkpoint of another policy, as upstream.
func TestMemoryManagerCheckpoint(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fake := crifake.New(clock.RealClock{})
	cfg, _, _ := standalone(t, fake)

	n, err := assemble(ctx, cfg, "test", clock.RealClock{}, nil)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	n.close()
	c, found, err := state.Read(cfg.RootDir)
	if err != nil || !found || c.PolicyName != "None" {
		t.Fatalf("checkpoint after start = %+v, found %v, %v; want policy None", c, found, err)
	}

	if err := state.Write(cfg.RootDir, state.Checkpoint{PolicyName: "Static"}); err != nil {
		t.Fatal(err)
	}
	n, err = assemble(ctx, cfg, "test", clock.RealClock{}, nil)
	if err == nil {
		n.close()
		t.Fatal("assemble over a Static checkpoint: no error")
	}
	if want := `configured policy "None" differs from state checkpoint policy "Static"`; !strings.Contains(err.Error(), want) {
		t.Errorf("assemble error %v, want one containing %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.RootDir, state.FileName)); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
}

const memoryPods = `apiVersion: v1
kind: Pod
metadata:
  name: fits
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: docker.io/library/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      limits: {cpu: 100m, memory: 64Mi}
---
apiVersion: v1
kind: Pod
metadata:
  name: huge
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: docker.io/library/busybox:1.36
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      limits: {cpu: 100m, memory: 1000Gi}
`

// TestMemoryManagerStatic: with memoryManagerPolicy Static and the hard
// eviction threshold reserved on NUMA node 0 (this host's sysfs; a host
// without NUMA is node 0 with all its memory), a
// Guaranteed pod's container is created bound to node 0, one that no NUMA
// node holds is refused with upstream's reason, and the checkpoint holds
// the first pod's block.
func TestMemoryManagerStatic(t *testing.T) {
	if _, err := os.Stat(filepath.Join(machine.SystemDir, "cpu/online")); err != nil {
		t.Skipf("no CPU topology in sysfs: %v", err)
	}
	fake := crifake.New(clock.RealClock{})
	cfg, manifests, port := standalone(t, fake)
	cfg.Kubelet.MemoryManagerPolicy = memorymanager.PolicyStatic
	cfg.Kubelet.ReservedMemory = []kubeletconfigv1beta1.MemoryReservation{{NumaNode: 0, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(cfg.Kubelet.EvictionHard["memory.available"])}}}
	runNode(t, cfg)
	for i, m := range strings.Split(memoryPods, "---\n") {
		if err := os.WriteFile(filepath.Join(manifests, fmt.Sprintf("pod%d.yaml", i)), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pods := waitPods(t, port, "fits running, huge refused", func(p map[string]corev1.Pod) bool {
		return p["fits-node-a"].Status.Phase == corev1.PodRunning && p["huge-node-a"].Status.Phase == corev1.PodFailed
	})
	if got := pods["huge-node-a"].Status.Reason; got != "UnexpectedAdmissionError" || !strings.Contains(pods["huge-node-a"].Status.Message, "no NUMA nodes with enough memory is available") {
		t.Errorf("huge refused with reason %q, want UnexpectedAdmissionError (%s)", got, pods["huge-node-a"].Status.Message)
	}
	var mems []string
	for _, c := range fake.Containers() {
		mems = append(mems, c.GetResources().GetLinux().GetCpusetMems())
	}
	if len(mems) != 1 || mems[0] != "0" {
		t.Errorf("containers created with cpuset.mems %q, want one with 0", mems)
	}
	c, _, err := state.Read(cfg.RootDir)
	if err != nil {
		t.Fatal(err)
	}
	uid := string(pods["fits-node-a"].UID)
	if c.PolicyName != "Static" || len(c.Entries[uid]["app"]) != 1 || c.Entries[uid]["app"][0].Size != 64<<20 {
		t.Errorf("checkpoint %+v, want Static with fits' 64Mi block", c)
	}
}
