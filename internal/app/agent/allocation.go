package agent

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/memorymanager"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/containerconfig"
	"github.com/berthk8s/berth/internal/pod/podworker"
)

// newAllocation opens the allocation and actuation checkpoints in the
// root directory and builds the allocation manager (in-place resize). A
// resize this node can make (resize) is admitted by admit.Resize, among
// the active pods the sync loop wants; an admitted or pending resize
// wakes the pod's worker. Its decisions feed the resize metrics.
func (n *node) newAllocation(admit func(ctx context.Context, pod *corev1.Pod, others []*corev1.Pod) (bool, string, string), resize allocation.Node) (*allocation.Manager, error) {
	allocated, err := allocation.OpenStore(n.cfg.RootDir, allocation.AllocatedFile)
	if err != nil {
		return nil, fmt.Errorf("open pod allocations: %w", err)
	}
	actuated, err := allocation.OpenStore(n.cfg.RootDir, allocation.ActuatedFile)
	if err != nil {
		return nil, fmt.Errorf("open pod actuations: %w", err)
	}
	return allocation.NewManager(allocation.Config{
		Allocated: allocated, Actuated: actuated, Clock: n.clock,
		Pods: n.activePods,
		Node: resize, Admit: admit,
		// n.pods.workers is built over the syncer, after this (doc.go).
		Sync: func(ctx context.Context, pod *corev1.Pod) {
			n.pods.workers.Update(ctx, podworker.UpdateOptions{Type: podworker.SyncPodSync, Pod: pod, StartTime: n.clock.Now()})
		},
		Recorder: n.cluster.recorder,
		Metrics:  n.metrics,
	})
}

// resizeNode is what decides whether this node can resize a pod at all.
func resizeNode(cfg *config.Config, host machine.Info) allocation.Node {
	kc := &cfg.Kubelet
	mem := memorySettings(cfg, host, int64(os.Getpagesize()))
	return allocation.Node{
		StaticCPUManager:    kc.CPUManagerPolicy == cpumanager.PolicyStatic,
		StaticMemoryManager: kc.MemoryManagerPolicy == memorymanager.PolicyStatic,
		Swap: func(pod *corev1.Pod, c *corev1.Container) string {
			return containerconfig.SwapBehavior(pod, c, mem)
		},
	}
}
