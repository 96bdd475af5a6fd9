package podresources

import (
	"context"

	"k8s.io/kubelet/pkg/apis/podresources/v1alpha1"
)

// v1alpha1Server is the v1alpha1 PodResourcesLister upstream still serves
// next to v1: every pod (not only the active ones), its containers (no
// sidecars) and their devices.
type v1alpha1Server struct {
	v1alpha1.UnsafePodResourcesListerServer
	cfg     *Config
	metrics *endpointMetrics
}

func (s *v1alpha1Server) List(ctx context.Context, _ *v1alpha1.ListPodResourcesRequest) (*v1alpha1.ListPodResourcesResponse, error) {
	s.metrics.total.WithLabelValues("v1alpha1").Inc()
	pods := s.cfg.Pods.AllPods()
	updateAllocatedDevices(ctx, s.cfg.Devices)
	out := make([]*v1alpha1.PodResources, len(pods))
	for i, pod := range pods {
		res := &v1alpha1.PodResources{Name: pod.Name, Namespace: pod.Namespace, Containers: make([]*v1alpha1.ContainerResources, len(pod.Spec.Containers))}
		for j, c := range pod.Spec.Containers {
			var devs []*v1alpha1.ContainerDevices
			for _, d := range s.cfg.Devices.GetDevices(string(pod.UID), c.Name) {
				devs = append(devs, &v1alpha1.ContainerDevices{ResourceName: d.ResourceName, DeviceIds: d.DeviceIds})
			}
			res.Containers[j] = &v1alpha1.ContainerResources{Name: c.Name, Devices: devs}
		}
		out[i] = res
	}
	return &v1alpha1.ListPodResourcesResponse{PodResources: out}, nil
}
