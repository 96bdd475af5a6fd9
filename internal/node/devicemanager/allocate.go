package devicemanager

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
	"github.com/berthk8s/berth/internal/node/topology"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ReasonUnexpected is admission's reason for an allocation that failed
// (upstream's admission.ErrorReasonUnexpected).
const ReasonUnexpected = "UnexpectedAdmissionError"

// AdmitError is the reason and message a pod is refused with when
// Allocate fails (upstream's admission.GetPodAdmitResult).
func (m *Manager) AdmitError(err error) (reason, message string) {
	return ReasonUnexpected, fmt.Sprintf(msgUnexpected, err)
}

// Admit gives every container of pod, init containers first, its devices
// with no NUMA preference: the device manager's part of the topology
// manager's admission with policy none, where it is the first provider.
func (m *Manager) Admit(ctx context.Context, pod *corev1.Pod) (ok bool, reason, message string) {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if err := m.Allocate(ctx, pod, &list[i], topology.Hint{}); err != nil {
				reason, message = m.AdmitError(err)
				return false, reason, message
			}
		}
	}
	return true, "", ""
}

// Allocate gives container c of pod its devices (upstream's Allocate): the
// caller goes through the init containers before the app containers. The
// devices of a non-restartable init container may be given again to the
// pod's later containers; those a container keeps are no longer reusable.
func (m *Manager) Allocate(ctx context.Context, pod *corev1.Pod, c *corev1.Container, affinity topology.Hint) error {
	uid := string(pod.UID)
	m.mu.Lock()
	m.unseen.Delete(uid)
	if m.reuseFor != uid {
		m.reuse, m.reuseFor = map[string]sets.Set[string]{}, uid
	}
	reuse := m.reuse
	m.mu.Unlock()
	if err := m.allocateContainer(ctx, pod, c, affinity, reuse); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if isInit(pod, c.Name) && !podutil.IsSidecar(c) {
		m.pods.addContainer(uid, c.Name, reuse)
	} else {
		m.pods.removeContainer(uid, c.Name, reuse)
	}
	return nil
}

func isInit(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}

// allocateContainer asks each device plugin resource of c's limits for the
// devices it still needs (upstream's allocateContainerResources) and
// records the Allocate responses.
func (m *Manager) allocateContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, affinity topology.Hint, reuse map[string]sets.Set[string]) error {
	uid := string(pod.UID)
	changed := false
	for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
		resource := string(name)
		q := c.Resources.Limits[name]
		if podutil.IsDRAExtendedResource(pod, c.Name, resource) || !m.isPluginResource(resource) {
			continue
		}
		devs, err := m.devicesToAllocate(ctx, pod, c.Name, resource, int(q.Value()), reuse[resource], affinity)
		if err != nil {
			return err
		}
		if devs.Len() == 0 {
			continue
		}
		changed = true
		if err := m.allocateFrom(ctx, uid, c.Name, resource, devs); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checkpointLocked(ctx)
}

// allocateFrom makes the Allocate call for devs and records its response;
// on failure the devices taken for it are given back.
func (m *Manager) allocateFrom(ctx context.Context, uid, container, resource string, devs sets.Set[string]) error {
	m.mu.Lock()
	e, ok := m.endpoints[resource]
	stopped := ok && !e.stopped.IsZero()
	if !ok || stopped {
		m.allocated = m.pods.devices()
		m.mu.Unlock()
		if !ok {
			return fmt.Errorf(msgUnknownPlugin, resource)
		}
		return e.errStopped()
	}
	m.mu.Unlock()
	klog.FromContext(ctx).V(4).Info("Making allocation request for device plugin", "devices", sets.List(devs), "resourceName", resource, "containerName", container)
	resp, err := e.allocate(ctx, sets.List(devs))
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.allocated = m.pods.devices()
		return err
	}
	if len(resp.GetContainerResponses()) == 0 {
		m.allocated = m.pods.devices()
		return fmt.Errorf(msgNoContainers, resp)
	}
	byNUMA := checkpoint.DevicesPerNUMA{}
	for _, id := range sets.List(devs) {
		nodes := numaNodes(m.devices[resource][id])
		if len(nodes) == 0 {
			byNUMA[nodeWithoutTopology] = append(byNUMA[nodeWithoutTopology], id)
			continue
		}
		for _, n := range nodes {
			byNUMA[n] = append(byNUMA[n], id)
		}
	}
	m.pods.insert(uid, container, resource, assignment{devices: byNUMA, resp: resp.GetContainerResponses()[0]})
	return nil
}

// isPluginResource reports whether resource is a registered device plugin
// resource or one some container was given.
func (m *Manager) isPluginResource(resource string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, registered := m.healthy[resource]
	_, allocated := m.allocated[resource]
	return registered || allocated
}

// RemoveStale frees the devices of pods that are neither among active
// nor pod, the one being admitted, once every source is seen (upstream's
// UpdateAllocatedDevices, which its allocation and hints call first;
// admission calls this before them, with the pods it admits against:
// those of one batch are not desired yet while it runs). A pod that ran
// at start keeps its devices until admission sees it again: after a
// restart the pods are admitted one after the other, and one gone while
// berth was down ends through Forget (HeldPods).
func (m *Manager) RemoveStale(ctx context.Context, pod *corev1.Pod, active []*corev1.Pod) {
	if !m.cfg.SourcesReady() {
		return
	}
	keep := sets.New(string(pod.UID))
	for _, p := range active {
		keep.Insert(string(p.UID))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keep = keep.Union(m.unseen)
	var gone []string
	for uid := range m.pods {
		if !keep.Has(uid) {
			gone = append(gone, uid)
		}
	}
	if len(gone) == 0 {
		return
	}
	slices.Sort(gone)
	klog.FromContext(ctx).V(3).Info("Pods to be removed", "podUIDs", gone)
	for _, uid := range gone {
		delete(m.pods, uid)
	}
	m.allocated = m.pods.devices()
	_ = m.checkpointLocked(ctx) // logged
}
