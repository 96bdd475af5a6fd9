package podutil

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests returns the pod's effective request, as upstream's resource
// helpers (k8s.io/component-helpers/resource) compute it for scheduling and
// admission:
//
//   - the sum of the containers' requests;
//   - restartable init containers (sidecars) run beside them: each adds to
//     that sum;
//   - a regular init container runs alone with the sidecars started before
//     it: the pod needs at least its request plus theirs;
//   - the effective request is the larger of the two, per resource;
//   - pod-level requests (spec.resources) replace it for cpu, memory and
//     hugepages;
//   - the pod overhead is added.
//
// It is the pod's spec (or allocation) alone: what a pod new to the node
// asks for.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// HeldRequests is what an admitted pod holds on the node, as upstream's
// NodeInfo counts the pods beside one being admitted (InPlacePodVerticalScaling
// and InPlacePodLevelResourcesVerticalScaling, on by default in v1.37): its
// allocation, or per container (and for pod-level resources) what its
// status reports where that is larger. A decrease being resized in place
// holds the old amount until the status shows it applied; an infeasible
// resize holds the allocation.
func HeldRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true,
	})
}
