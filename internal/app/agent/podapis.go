package agent

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/cpumanager"
	"github.com/berthk8s/berth/internal/node/devicemanager"
	"github.com/berthk8s/berth/internal/node/memorymanager"
	"github.com/berthk8s/berth/internal/node/memorymanager/state"
	"github.com/berthk8s/berth/internal/pod/podsync"
	"github.com/berthk8s/berth/internal/serve/podresources"
	"github.com/berthk8s/berth/internal/serve/podsapi"
)

// podAPIs are the node-local gRPC servers over the pods: the pod
// resources API (always served, as upstream: its gates are GA) and the
// Pods API (nil with the PodsAPI gate off).
type podAPIs struct {
	resources *podresources.Server
	pods      *podsapi.Server
}

// newPodAPIs builds both servers over the pod path and the resource
// managers. Their funcs read n.pods.sources and n.pods.workers, built
// later in assemblePods, and the device and DRA managers, built after
// them; nothing calls them before run.
func (n *node) newPodAPIs() (podAPIs, error) {
	res, err := podresources.New(podresources.Config{
		RootDir: n.cfg.RootDir, Pods: podResourcesPods{n}, CPUs: cpuResources{n.managers.cpus},
		Memory: memoryResources{n.managers.memory}, Devices: deviceResources{n}, Dynamic: dynamicResources{n},
		UseActivePods: n.cfg.PodResourcesListActivePods(), Registerer: n.metrics.Registry(), Clock: n.clock,
	})
	if err != nil {
		return podAPIs{}, err
	}
	// Built either way, as upstream registers the Pods API's metrics
	// whatever the gate; only served and fed with it on.
	pods, err := podsapi.New(podsapi.Config{
		RootDir: n.cfg.RootDir, Pods: n.pods.desired.Pods, Pod: n.pods.desired.Pod, Status: n.pods.statuses.Get,
		SourcesReady: func() bool { return n.pods.sources.Ready() }, Registerer: n.metrics.Registry(), Clock: n.clock,
	})
	if err != nil {
		return podAPIs{}, err
	}
	apis := podAPIs{resources: res}
	if n.cfg.PodsAPI() {
		apis.pods = pods
	}
	return apis, nil
}

// runs are the servers to start, by name.
func (a podAPIs) runs() map[string]func(context.Context) error {
	out := map[string]func(context.Context) error{"pod-resources": a.resources.Run}
	if a.pods != nil {
		out["pods-api"] = a.pods.Run
	}
	return out
}

// observePodsAPI shows a stored status to the Pods API's watchers (nothing with
// the API off, or for a pod no longer desired).
func (n *node) observePodsAPI(uid types.UID, st corev1.PodStatus) {
	if n.serve.podAPIs.pods == nil {
		return
	}
	if pod, ok := n.pods.desired.Pod(uid); ok {
		n.serve.podAPIs.pods.Observe(pod, st)
	}
}

// podsAPIFinished tells the Pods API a pod's worker finished it.
func (n *node) podsAPIFinished(uid types.UID) {
	if n.serve.podAPIs.pods != nil {
		n.serve.podAPIs.pods.Finished(uid)
	}
}

// watchedStatuses shows every status the pod syncer stores to the Pods
// API, as upstream's status manager notifies it.
type watchedStatuses struct {
	podsync.StatusStore
	n *node
}

var _ podsync.StatusStore = watchedStatuses{}

func (s watchedStatuses) Set(uid types.UID, status corev1.PodStatus) corev1.PodStatus {
	out := s.StatusStore.Set(uid, status)
	s.n.observePodsAPI(uid, out)
	return out
}

// podResourcesPods is the pod resources API's view of the pods: the
// active ones (podworker's rule), all the desired ones, an active one by
// name, as upstream's kubeletPodsProvider.
type podResourcesPods struct{ n *node }

func (p podResourcesPods) ActivePods() []*corev1.Pod { return p.n.activePods() }
func (p podResourcesPods) AllPods() []*corev1.Pod    { return p.n.pods.desired.Pods() }

func (p podResourcesPods) ActivePod(namespace, name string) (*corev1.Pod, bool) {
	for _, pod := range p.n.pods.desired.Pods() {
		if pod.Namespace == namespace && pod.Name == name && p.n.isActive(pod.UID) {
			return pod, true
		}
	}
	return nil, false
}

// cpuResources is the CPU manager as the pod resources API reads it.
type cpuResources struct{ m *cpumanager.Manager }

func (c cpuResources) ExclusiveCPUs(podUID, container string) []int64 {
	return cpuIDs(c.m.ExclusiveCPUs(podUID, container))
}
func (c cpuResources) AllocatableCPUs() []int64 { return cpuIDs(c.m.AllocatableCPUs()) }

func cpuIDs(s cpuset.CPUSet) []int64 {
	out := make([]int64, 0, s.Size())
	for _, id := range s.List() {
		out = append(out, int64(id))
	}
	return out
}

// memoryResources is the memory manager as the pod resources API reads it.
type memoryResources struct{ m *memorymanager.Manager }

func (r memoryResources) ContainerMemory(podUID, container string) []*podresourcesv1.ContainerMemory {
	return containerMemory(r.m.Memory(podUID, container))
}
func (r memoryResources) AllocatableMemory() []*podresourcesv1.ContainerMemory {
	return containerMemory(r.m.AllocatableMemory())
}

// containerMemory is upstream's containerMemoryFromBlock: one entry per
// block, its type, size and NUMA nodes.
func containerMemory(blocks []state.Block) []*podresourcesv1.ContainerMemory {
	var out []*podresourcesv1.ContainerMemory
	for _, b := range blocks {
		m := &podresourcesv1.ContainerMemory{MemoryType: string(b.Type), Size: b.Size, Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{}}}
		for _, id := range slices.Clone(b.NUMAAffinity) {
			m.Topology.Nodes = append(m.Topology.Nodes, &podresourcesv1.NUMANode{ID: int64(id)})
		}
		out = append(out, m)
	}
	return out
}

// deviceResources is the device manager's view for the pod resources
// API (n.managers.devices is built after the servers; nothing asks
// before run).
type deviceResources struct{ n *node }

func (d deviceResources) GetDevices(podUID, container string) []*podresourcesv1.ContainerDevices {
	return containerDevices(d.n.managers.devices.GetDevices(podUID, container))
}

func (d deviceResources) GetAllocatableDevices() []*podresourcesv1.ContainerDevices {
	return containerDevices(d.n.managers.devices.GetAllocatableDevices())
}

// containerDevices is the API's form of devices by resource: one entry per
// device and NUMA node, or per device for one without topology, as
// upstream's containerDevicesFromResourceDeviceInstances; sorted by
// resource, then device (upstream's order is its maps').
func containerDevices(byResource map[string][]devicemanager.Device) []*podresourcesv1.ContainerDevices {
	var out []*podresourcesv1.ContainerDevices
	for _, name := range slices.Sorted(maps.Keys(byResource)) {
		for _, d := range byResource[name] {
			if len(d.NUMA) == 0 {
				out = append(out, &podresourcesv1.ContainerDevices{ResourceName: name, DeviceIds: []string{d.ID}})
				continue
			}
			for _, id := range d.NUMA {
				out = append(out, &podresourcesv1.ContainerDevices{ResourceName: name, DeviceIds: []string{d.ID},
					Topology: &podresourcesv1.TopologyInfo{Nodes: []*podresourcesv1.NUMANode{{ID: id}}}})
			}
		}
	}
	return out
}

// dynamicResources is the DRA manager's view for the pod resources API
// (n.managers.dra is built after the servers; nothing asks before run).
type dynamicResources struct{ n *node }

func (d dynamicResources) GetDynamicResources(pod *corev1.Pod, c *corev1.Container) []*podresourcesv1.DynamicResource {
	return d.n.managers.dra.GetDynamicResources(pod, c)
}
