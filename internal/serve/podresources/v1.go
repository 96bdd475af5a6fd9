package podresources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// v1Server is the v1 PodResourcesLister.
type v1Server struct {
	podresourcesv1.UnsafePodResourcesListerServer
	cfg     *Config
	metrics *endpointMetrics
}

const v1Version = "v1"

// List returns the resources of the active pods' containers (every pod's
// with UseActivePods off), as upstream's.
func (s *v1Server) List(ctx context.Context, _ *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	s.metrics.total.WithLabelValues(v1Version).Inc()
	s.metrics.list.WithLabelValues(v1Version).Inc()
	var pods []*corev1.Pod
	if s.cfg.UseActivePods {
		pods = s.cfg.Pods.ActivePods()
	} else {
		pods = s.cfg.Pods.AllPods()
	}
	updateAllocatedDevices(ctx, s.cfg.Devices)
	out := make([]*podresourcesv1.PodResources, len(pods))
	for i, pod := range pods {
		out[i] = s.podResources(pod)
	}
	return &podresourcesv1.ListPodResourcesResponse{PodResources: out}, nil
}

// Get returns one active pod's resources; a pod not there (or no longer
// active) is an error worded as upstream's.
func (s *v1Server) Get(_ context.Context, req *podresourcesv1.GetPodResourcesRequest) (*podresourcesv1.GetPodResourcesResponse, error) {
	s.metrics.total.WithLabelValues(v1Version).Inc()
	s.metrics.get.WithLabelValues(v1Version).Inc()
	pod, ok := s.cfg.Pods.ActivePod(req.GetPodNamespace(), req.GetPodName())
	if !ok {
		s.metrics.getErrors.WithLabelValues(v1Version).Inc()
		return nil, fmt.Errorf("pod %s in namespace %s not found", req.GetPodName(), req.GetPodNamespace())
	}
	return &podresourcesv1.GetPodResourcesResponse{PodResources: s.podResources(pod)}, nil
}

// GetAllocatableResources returns what the node can allocate.
func (s *v1Server) GetAllocatableResources(context.Context, *podresourcesv1.AllocatableResourcesRequest) (*podresourcesv1.AllocatableResourcesResponse, error) {
	s.metrics.total.WithLabelValues(v1Version).Inc()
	s.metrics.getAllocatable.WithLabelValues(v1Version).Inc()
	return &podresourcesv1.AllocatableResourcesResponse{
		Devices: s.cfg.Devices.GetAllocatableDevices(),
		CpuIds:  s.cfg.CPUs.AllocatableCPUs(),
		Memory:  s.cfg.Memory.AllocatableMemory(),
	}, nil
}

// podResources lists the pod's restartable init containers (sidecars),
// then its containers, as upstream's. The pod-level CPUs and memory of
// PodLevelResourceManagers stay empty: berth refuses that gate on.
func (s *v1Server) podResources(pod *corev1.Pod) *podresourcesv1.PodResources {
	res := &podresourcesv1.PodResources{
		Name: pod.Name, Namespace: pod.Namespace,
		Containers: make([]*podresourcesv1.ContainerResources, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)),
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podutil.IsSidecar(c) {
			res.Containers = append(res.Containers, s.containerResources(pod, c))
		}
	}
	for i := range pod.Spec.Containers {
		res.Containers = append(res.Containers, s.containerResources(pod, &pod.Spec.Containers[i]))
	}
	return res
}

func (s *v1Server) containerResources(pod *corev1.Pod, c *corev1.Container) *podresourcesv1.ContainerResources {
	uid := string(pod.UID)
	return &podresourcesv1.ContainerResources{
		Name:             c.Name,
		Devices:          s.cfg.Devices.GetDevices(uid, c.Name),
		CpuIds:           s.cfg.CPUs.ExclusiveCPUs(uid, c.Name),
		Memory:           s.cfg.Memory.ContainerMemory(uid, c.Name),
		DynamicResources: s.cfg.Dynamic.GetDynamicResources(pod, c),
	}
}

func updateAllocatedDevices(ctx context.Context, d Devices) {
	if u, ok := d.(allocatedDevicesUpdater); ok {
		u.UpdateAllocatedDevices(ctx)
	}
}
