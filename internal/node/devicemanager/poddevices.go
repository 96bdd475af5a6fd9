package devicemanager

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
)

// nodeWithoutTopology is the NUMA node of devices that have none.
const nodeWithoutTopology = -1

// assignment is one container's devices of one resource and the plugin's
// Allocate response for them.
type assignment struct {
	devices checkpoint.DevicesPerNUMA
	resp    *pluginapi.ContainerAllocateResponse
}

// podDevices are the assignments, pod UID -> container -> resource. The
// Manager's mutex guards it.
type podDevices map[string]map[string]map[string]assignment

func (p podDevices) insert(uid, container, resource string, a assignment) {
	if p[uid] == nil {
		p[uid] = map[string]map[string]assignment{}
	}
	if p[uid][container] == nil {
		p[uid][container] = map[string]assignment{}
	}
	p[uid][container][resource] = a
}

// containerDevices are the container's device IDs of resource, nil when it
// has no assignment of it.
func (p podDevices) containerDevices(uid, container, resource string) sets.Set[string] {
	a, ok := p[uid][container][resource]
	if !ok {
		return nil
	}
	return idsOf(a.devices)
}

func idsOf(d checkpoint.DevicesPerNUMA) sets.Set[string] {
	out := sets.New[string]()
	for _, ids := range d {
		out.Insert(ids...)
	}
	return out
}

// holder is the pod holding device id of resource, "" for none (device
// IDs are unique within a resource only).
func (p podDevices) holder(resource, id string) string {
	for uid, containers := range p {
		for _, resources := range containers {
			if a, ok := resources[resource]; ok && idsOf(a.devices).Has(id) {
				return uid
			}
		}
	}
	return ""
}

// addContainer adds the container's devices to into, by resource.
func (p podDevices) addContainer(uid, container string, into map[string]sets.Set[string]) {
	for resource, a := range p[uid][container] {
		into[resource] = into[resource].Union(idsOf(a.devices))
	}
}

// removeContainer removes the container's devices from from.
func (p podDevices) removeContainer(uid, container string, from map[string]sets.Set[string]) {
	for resource, a := range p[uid][container] {
		from[resource] = from[resource].Difference(idsOf(a.devices))
	}
}

// devices are every assigned device, by resource (upstream's devices()).
func (p podDevices) devices() map[string]sets.Set[string] {
	out := map[string]sets.Set[string]{}
	for _, containers := range p {
		for _, resources := range containers {
			for resource, a := range resources {
				if out[resource] == nil {
					out[resource] = sets.New[string]()
				}
				if a.resp != nil {
					out[resource] = out[resource].Union(idsOf(a.devices))
				}
			}
		}
	}
	return out
}

// entries are the checkpoint's form, sorted by pod, container, resource
// (upstream writes map order; the order does not matter on read).
func (p podDevices) entries(ctx context.Context) []checkpoint.PodDevicesEntry {
	var out []checkpoint.PodDevicesEntry
	for _, uid := range slices.Sorted(maps.Keys(p)) {
		for _, container := range slices.Sorted(maps.Keys(p[uid])) {
			for _, resource := range slices.Sorted(maps.Keys(p[uid][container])) {
				a := p[uid][container][resource]
				if a.resp == nil {
					continue
				}
				resp, err := proto.Marshal(a.resp)
				if err != nil {
					klog.FromContext(ctx).Error(err, "Can't marshal allocResp", "podUID", uid, "containerName", container, "resourceName", resource)
					continue
				}
				out = append(out, checkpoint.PodDevicesEntry{
					PodUID: uid, ContainerName: container, ResourceName: resource, DeviceIDs: a.devices, AllocResp: resp,
				})
			}
		}
	}
	return out
}

// fromEntries takes the checkpoint's entries; one whose response does not
// decode is logged and skipped, as upstream.
func (p podDevices) fromEntries(ctx context.Context, entries []checkpoint.PodDevicesEntry) {
	for _, e := range entries {
		resp := &pluginapi.ContainerAllocateResponse{}
		if err := proto.Unmarshal(e.AllocResp, resp); err != nil {
			klog.FromContext(ctx).Error(err, "Can't unmarshal allocResp", "podUID", e.PodUID, "containerName", e.ContainerName, "resourceName", e.ResourceName)
			continue
		}
		p.insert(e.PodUID, e.ContainerName, e.ResourceName, assignment{devices: e.DeviceIDs, resp: resp})
	}
}

// containerResources are the container's devices with their NUMA nodes,
// by resource, sorted by ID (upstream's getContainerDevices); nil for none.
func (p podDevices) containerResources(uid, container string) map[string][]Device {
	resources, ok := p[uid][container]
	if !ok {
		return nil
	}
	out := map[string][]Device{}
	for resource, a := range resources {
		if len(a.devices) == 0 {
			continue
		}
		numa := map[string][]int64{}
		for node, ids := range a.devices {
			for _, id := range ids {
				if _, seen := numa[id]; !seen {
					numa[id] = nil
				}
				if node != nodeWithoutTopology {
					numa[id] = append(numa[id], node)
				}
			}
		}
		list := make([]Device, 0, len(numa))
		for _, id := range slices.Sorted(maps.Keys(numa)) {
			nodes := numa[id]
			slices.Sort(nodes)
			list = append(list, Device{ID: id, NUMA: nodes})
		}
		out[resource] = list
	}
	return out
}
