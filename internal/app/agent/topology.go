package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/devicemanager"
	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/pod/admission"
)

// newTopologyManager builds the topology manager (internal/node/topology) from
// topologyManagerPolicy and topologyManagerScope, with the device and CPU
// managers as its hint providers, in upstream's order; nil with policy none, where the CPU manager admits
// alone as before. Like upstream's NewManager it reads the NUMA nodes (and
// their distances for prefer-closest-numa-nodes) and refuses a host with
// more than max-allowable-numa-nodes.
func (n *node) newTopologyManager(devices *devicemanager.Manager, cpus *cpumanager.Manager, hostTopology topologyReader) (*topology.Manager, error) {
	kc := &n.cfg.Kubelet
	if kc.TopologyManagerPolicy == topology.PolicyNone || n.cfg.TopologyManagerOptions == nil {
		return nil, nil
	}
	opts := *n.cfg.TopologyManagerOptions
	host, err := hostTopology()
	if err != nil {
		return nil, fmt.Errorf("cannot discover NUMA topology: %w", err)
	}
	numa, err := topology.NUMAInfoOf(host, opts.PreferClosestNUMA)
	if err != nil {
		return nil, fmt.Errorf("cannot discover NUMA topology: %w", err)
	}
	m, err := topology.New(topology.Config{
		Policy: kc.TopologyManagerPolicy, Scope: kc.TopologyManagerScope, Options: opts, NUMA: numa,
		Providers: []topology.HintProvider{devices, cpus},
	})
	if err != nil {
		return nil, fmt.Errorf("start topology manager: %w", err)
	}
	return m, nil
}

// admitResources is the resource managers' admission of a pod among the
// active ones, upstream's topology manager admit handler: the topology
// manager's when its policy is not none (the CPU manager's stale state
// released first, as its hint calls do upstream), else the device
// manager's and then the CPU manager's; the devices of pods gone are
// freed first either way.
func (n *node) admitResources(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) admission.Result {
	snap := cpumanager.Snapshot{SourcesReady: n.pods.sources.Ready(), Active: active}
	n.managers.devices.RemoveStale(ctx, pod, active)
	if n.managers.topology == nil {
		// The device manager is the first provider, as upstream's: its
		// devices for every container, then the CPU manager's CPUs.
		if ok, reason, message := n.managers.devices.Admit(ctx, pod); !ok {
			return admission.Result{Reason: reason, Message: message}
		}
		ok, reason, message := n.managers.cpus.Admit(ctx, pod, snap)
		return admission.Result{Admit: ok, Reason: reason, Message: message}
	}
	n.managers.cpus.RemoveStale(ctx, pod, snap)
	ok, reason, message := n.managers.topology.Admit(ctx, pod)
	return admission.Result{Admit: ok, Reason: reason, Message: message}
}
