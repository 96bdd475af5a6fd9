package allocation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// For returns what a pod asks for: the resources of every container
// (regular and init: InPlacePodVerticalScalingInitContainers is GA in
// v1.37, so every init container's allocation is tracked, as upstream's
// ResourceInfoForPod) and its pod-level resources.
func For(pod *corev1.Pod) PodResources {
	r := PodResources{ContainerResources: make(map[string]corev1.ResourceRequirements, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r.ContainerResources[c.Name] = *c.Resources.DeepCopy()
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		r.ContainerResources[c.Name] = *c.Resources.DeepCopy()
	}
	r.PodLevelResources = pod.Spec.Resources.DeepCopy()
	return r
}

// Apply returns pod with r overlaid on its spec (upstream's
// UpdatePodFromAllocation): the resources of each container r names and
// the pod-level resources. The pod is copied only when something
// differs; changed says whether it did.
func Apply(pod *corev1.Pod, r PodResources) (out *corev1.Pod, changed bool) {
	out = pod
	copyOnce := func() {
		if !changed {
			out = pod.DeepCopy()
			changed = true
		}
	}
	if !equality.Semantic.DeepEqual(pod.Spec.Resources, r.PodLevelResources) {
		copyOnce()
		out.Spec.Resources = r.PodLevelResources.DeepCopy()
	}
	for _, init := range []bool{true, false} {
		for i := range containersOf(pod, init) {
			c := &containersOf(pod, init)[i]
			want, ok := r.ContainerResources[c.Name]
			if !ok || equality.Semantic.DeepEqual(c.Resources, want) {
				continue
			}
			copyOnce()
			containersOf(out, init)[i].Resources = *want.DeepCopy()
		}
	}
	return out, changed
}

// ResizableInPlace reports whether a running container of this kind is
// resized in place (upstream's kuberuntime isResizableContainer): regular
// containers and sidecars. An ordinary init container's allocation
// changes, but a running one keeps its resources until it exits.
func ResizableInPlace(c *corev1.Container, init bool) bool {
	return !init || podutil.IsSidecar(c)
}

func containersOf(pod *corev1.Pod, init bool) []corev1.Container {
	if init {
		return pod.Spec.InitContainers
	}
	return pod.Spec.Containers
}
