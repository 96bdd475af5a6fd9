package devicemanager

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/topology"
)

// ContainerOptions are what a container's devices add to its CRI config
// (upstream's DeviceRunContainerOptions): environment variables, mounts
// and device nodes, which go before the container's own, annotations,
// which the kubelet's own override, and CDI device names.
type ContainerOptions struct {
	Envs        []*runtimeapi.KeyValue
	Mounts      []*runtimeapi.Mount
	Devices     []*runtimeapi.Device
	Annotations map[string]string
	CDIDevices  []*runtimeapi.CDIDevice
}

// ContainerOptions are the options of container c of pod, about to be
// created (upstream's GetDeviceRunContainerOptions): it first calls
// PreStartContainer for each resource whose plugin asks for it, and
// allocates again a container of an active pod that should hold devices
// but does not (a race at restart). Its errors fail the container's
// creation.
func (m *Manager) ContainerOptions(ctx context.Context, pod *corev1.Pod, c *corev1.Container) (ContainerOptions, error) {
	uid := string(pod.UID)
	reallocate := false
	for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
		resource := string(name)
		if q := c.Resources.Limits[name]; q.Value() == 0 || !m.isPluginResource(resource) {
			continue
		}
		if err := m.preStart(ctx, uid, c.Name, resource); err != nil {
			return ContainerOptions{}, err
		}
		if !m.podActive(pod) {
			continue
		}
		m.mu.Lock()
		missing := m.pods.containerDevices(uid, c.Name, resource) == nil
		m.mu.Unlock()
		reallocate = reallocate || missing
	}
	if reallocate {
		klog.FromContext(ctx).V(2).Info("Needs to re-allocate device plugin resources for pod", "pod", klog.KObj(pod), "containerName", c.Name)
		if err := m.Allocate(ctx, pod, c, topology.Hint{}); err != nil {
			return ContainerOptions{}, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods.runOptions(ctx, uid, c.Name), nil
}

func (m *Manager) podActive(pod *corev1.Pod) bool {
	for _, p := range m.cfg.ActivePods() {
		if p.UID == pod.UID {
			return true
		}
	}
	return false
}

// preStart calls PreStartContainer when the resource's plugin asks for it
// (upstream's callPreStartContainerIfNeeded).
func (m *Manager) preStart(ctx context.Context, uid, container, resource string) error {
	m.mu.Lock()
	e, ok := m.endpoints[resource]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf(msgNoEndpoint, resource)
	}
	if e.opts == nil || !e.opts.GetPreStartRequired() {
		m.mu.Unlock()
		return nil
	}
	devs := m.pods.containerDevices(uid, container, resource)
	stopped := !e.stopped.IsZero()
	m.mu.Unlock()
	if devs == nil {
		return fmt.Errorf(msgNoDevicesCached, uid, container, resource)
	}
	klog.FromContext(ctx).V(4).Info("Issuing a PreStartContainer call for container", "containerName", container, "podUID", uid)
	err := e.errStopped()
	if !stopped {
		err = e.preStartContainer(ctx, sets.List(devs))
	}
	if err != nil {
		return fmt.Errorf(msgPreStartFailed, err)
	}
	return nil
}

// runOptions merges the container's Allocate responses, resource by
// resource (sorted): the first setting of an environment variable, a
// device's or a mount's container path, an annotation or a CDI device wins,
// as upstream's deviceRunContainerOptions.
func (p podDevices) runOptions(ctx context.Context, uid, container string) ContainerOptions {
	logger := klog.FromContext(ctx)
	var opts ContainerOptions
	resources, ok := p[uid][container]
	if !ok {
		return opts
	}
	envs, devs, mounts, cdi := map[string]string{}, map[string]string{}, map[string]string{}, sets.New[string]()
	opts.Annotations = map[string]string{}
	for _, resource := range slices.Sorted(maps.Keys(resources)) {
		resp := resources[resource].resp
		for _, k := range slices.Sorted(maps.Keys(resp.GetEnvs())) {
			v := resp.GetEnvs()[k]
			if e, ok := envs[k]; ok {
				if e != v {
					logger.Error(nil, "Environment variable has conflicting setting", "envKey", k, "expected", v, "got", e)
				}
				continue
			}
			envs[k] = v
			opts.Envs = append(opts.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
		}
		for _, d := range resp.GetDevices() {
			if h, ok := devs[d.GetContainerPath()]; ok {
				if h != d.GetHostPath() {
					logger.Error(nil, "Container device has conflicting mapping host devices", "containerPath", d.GetContainerPath(), "got", h, "expected", d.GetHostPath())
				}
				continue
			}
			devs[d.GetContainerPath()] = d.GetHostPath()
			opts.Devices = append(opts.Devices, &runtimeapi.Device{ContainerPath: d.GetContainerPath(), HostPath: d.GetHostPath(), Permissions: d.GetPermissions()})
		}
		for _, mt := range resp.GetMounts() {
			if h, ok := mounts[mt.GetContainerPath()]; ok {
				if h != mt.GetHostPath() {
					logger.Error(nil, "Container mount has conflicting mapping host mounts", "containerPath", mt.GetContainerPath(), "conflictingPath", h, "hostPath", mt.GetHostPath())
				}
				continue
			}
			mounts[mt.GetContainerPath()] = mt.GetHostPath()
			opts.Mounts = append(opts.Mounts, &runtimeapi.Mount{ContainerPath: mt.GetContainerPath(), HostPath: mt.GetHostPath(), Readonly: mt.GetReadOnly()})
		}
		for _, k := range slices.Sorted(maps.Keys(resp.GetAnnotations())) {
			if _, ok := opts.Annotations[k]; !ok {
				opts.Annotations[k] = resp.GetAnnotations()[k]
			}
		}
		for _, d := range resp.GetCdiDevices() {
			if !cdi.Has(d.GetName()) {
				cdi.Insert(d.GetName())
				opts.CDIDevices = append(opts.CDIDevices, &runtimeapi.CDIDevice{Name: d.GetName()})
			}
		}
	}
	return opts
}
