package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/berthk8s/berth/internal/node/devicemanager"
)

// devicePluginDir is the device plugin directory: upstream's fixed
// /var/lib/kubelet/device-plugins whatever the root directory (device
// plugins dial it), or berth's --device-plugin-dir.
func (n *node) devicePluginDir() string { return n.cfg.DevicePluginDir }

// newDeviceManager builds the device manager (internal/node/devicemanager):
// it restores kubelet_internal_checkpoint and takes the containers the
// runtime runs now (a container running at start keeps its devices while
// its plugin registers again). Node status is kicked when devices change.
func (n *node) newDeviceManager(ctx context.Context, hostTopology topologyReader) (*devicemanager.Manager, error) {
	running, err := n.runningContainers(ctx)
	if err != nil {
		return nil, err
	}
	var numa []int
	if host, err := hostTopology(); err == nil {
		for _, node := range host.Nodes {
			numa = append(numa, node.ID)
		}
	}
	m, err := devicemanager.New(ctx, devicemanager.Config{
		Dir: n.devicePluginDir(), Clock: n.clock, ActivePods: n.activePods, Running: running, NUMANodes: numa,
		SourcesReady: func() bool { return n.pods.sources.Ready() },
		Changed:      func() { n.cluster.kickNode() },
	})
	if err != nil {
		return nil, fmt.Errorf("start device manager: %w", err)
	}
	return m, nil
}

// runningContainers are the runtime's running containers, pod UID ->
// container names (upstream's initial container map and running set).
func (n *node) runningContainers(ctx context.Context) (map[string]sets.Set[string], error) {
	resp, err := n.conn.client.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
	})
	if err != nil {
		return nil, fmt.Errorf("list running containers for the device manager: %w", err)
	}
	out := map[string]sets.Set[string]{}
	for _, c := range resp.GetContainers() {
		uid, name := c.GetLabels()[kubelettypes.KubernetesPodUIDLabel], c.GetLabels()[kubelettypes.KubernetesContainerNameLabel]
		if uid == "" || name == "" {
			continue
		}
		if out[uid] == nil {
			out[uid] = sets.New[string]()
		}
		out[uid].Insert(name)
	}
	return out, nil
}

// resetExtendedResources is the device manager's verdict on a Node found
// at registration (no reset before the device manager is built).
func (n *node) resetExtendedResources() bool {
	return n.managers.devices != nil && n.managers.devices.ShouldResetExtendedResourceCapacity()
}

// devicePlugins are the device plugin resources for node status (none
// before the device manager is built).
func (n *node) devicePlugins(ctx context.Context) (capacity, allocatable corev1.ResourceList, removed []string) {
	if n.managers.devices == nil {
		return nil, nil, nil
	}
	return n.managers.devices.Capacity(ctx)
}
