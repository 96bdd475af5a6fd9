package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/cluster/nodestatus"
	"github.com/berthk8s/berth/internal/node/memorymanager"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/admission"
)

// newMemoryManager starts the memory manager (internal/node/memorymanager) as
// upstream's container manager does: it restores
// <root-dir>/memory_manager_state, failing the start on a checkpoint of
// another policy, and writes one when there is none. With the Static
// policy it takes the NUMA nodes of the host topology (a host without
// NUMA sysfs is node 0 with all the memory: machine.ReadTopology) and checks reservedMemory
// against the node's reservation (kubeReserved + systemReserved + the
// hard eviction threshold, as the node's allocatable counts it) and the
// restored state against the machine.
func (n *node) newMemoryManager(host machine.Info, hostTopology topologyReader) (*memorymanager.Manager, error) {
	kc := &n.cfg.Kubelet
	cfg := memorymanager.Config{Policy: kc.MemoryManagerPolicy, StateDir: n.cfg.RootDir}
	if kc.MemoryManagerPolicy == memorymanager.PolicyStatic {
		topo, err := hostTopology()
		if err != nil {
			return nil, fmt.Errorf("discover NUMA nodes: %w", err)
		}
		nodes, err := memorymanager.NodesOf(topo)
		if err != nil {
			return nil, fmt.Errorf("discover NUMA nodes: %w", err)
		}
		in := nodestatus.Inputs{Machine: host, Reserved: nodestatus.Reserved{
			KubeReserved: kc.KubeReserved, SystemReserved: kc.SystemReserved, EvictionHard: n.cfg.AllocatableEvictionHard(),
		}}
		if cfg.Static, err = memorymanager.NewStatic(nodes, nodestatus.Reservation(nodestatus.Capacity(nil, in), in), kc.ReservedMemory); err != nil {
			return nil, fmt.Errorf("start memory manager: %w", err)
		}
	}
	m, err := memorymanager.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("start memory manager: %w", err)
	}
	return m, nil
}

// admitMemory is the memory manager's admission of a pod among the active
// ones, as upstream's resource managers' admit handler.
func (n *node) admitMemory(_ context.Context, pod *corev1.Pod, active []*corev1.Pod) admission.Result {
	ok, reason, message := n.managers.memory.Admit(pod, active, n.pods.sources.Ready())
	return admission.Result{Admit: ok, Reason: reason, Message: message}
}
