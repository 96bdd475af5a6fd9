package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// newCPUManager builds the CPU manager (internal/node/cpumanager) from
// cpuManagerPolicy: it restores <root-dir>/cpu_manager_state and fails
// the start on a checkpoint of another policy, as upstream. Its reconcile
// loop reads the active pods and their running containers (from the PLEG
// cache) when it runs. With the static policy it takes the CPUs of the
// host topology.
func (n *node) newCPUManager(ctx context.Context, cache *pleg.Cache, hostTopology topologyReader) (*cpumanager.Manager, error) {
	kc := &n.cfg.Kubelet
	cfg := cpumanager.Config{
		Policy: kc.CPUManagerPolicy, StateDir: n.cfg.RootDir, ReconcilePeriod: kc.CPUManagerReconcilePeriod.Duration,
		NumReserved: n.cfg.NumReservedCPUs(), Clock: n.clock,
		Update:   n.updateCPUSet,
		Snapshot: func() cpumanager.Snapshot { return n.cpuSnapshot(cache) },
	}
	if kc.CPUManagerPolicy == cpumanager.PolicyStatic {
		host, err := hostTopology()
		if err != nil {
			return nil, fmt.Errorf("discover CPU topology: %w", err)
		}
		cfg.Topology = cpumanager.TopologyOf(host)
		if cfg.ReservedCPUs, err = cpuset.Parse(kc.ReservedSystemCPUs); err != nil {
			return nil, fmt.Errorf("parse reservedSystemCPUs %q: %w", kc.ReservedSystemCPUs, err)
		}
		if n.cfg.CPUManagerOptions != nil {
			cfg.Options = *n.cfg.CPUManagerOptions
		}
	}
	m, err := cpumanager.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start cpu manager: %w", err)
	}
	return m, nil
}

// updateCPUSet sets a running container's cpuset, as upstream's
// updateContainerCPUSet: only CpusetCpus in the request.
func (n *node) updateCPUSet(ctx context.Context, containerID string, cpus cpuset.CPUSet) error {
	_, err := n.conn.client.Runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: containerID,
		Linux:       &runtimeapi.LinuxContainerResources{CpusetCpus: cpus.String()},
	})
	if err != nil {
		return fmt.Errorf("update cpuset of container %q: %w", containerID, err)
	}
	return nil
}

// cpuSnapshot is what the CPU manager's reconcile loop looks at: the
// active pods (upstream's GetActivePods) and their running containers.
func (n *node) cpuSnapshot(cache *pleg.Cache) cpumanager.Snapshot {
	snap := cpumanager.Snapshot{SourcesReady: n.pods.sources.Ready(), Running: map[string]map[string]string{}}
	for _, p := range n.activePods() {
		snap.Active = append(snap.Active, p)
		rt, err := cache.Get(p.UID)
		if err != nil || rt == nil {
			continue
		}
		running := map[string]string{}
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			if rc := rt.LatestContainer(c.Name); rc != nil && rc.State == runtimestate.ContainerRunning {
				running[c.Name] = rc.ID
			}
		}
		snap.Running[string(p.UID)] = running
	}
	return snap
}
