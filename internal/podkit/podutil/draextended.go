package podutil

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
)

// DRA-backed extended resources (upstream's DRAExtendedResource, GA and
// locked on in v1.37): a container asks for an extended resource (or for
// deviceclass.resource.kubernetes.io/<class>) that a DeviceClass serves;
// the scheduler allocates a ResourceClaim for the pod and records it in
// status.extendedResourceClaimStatus: the claim's name and, per container
// and resource, the claim's request that serves it. The DRA manager
// prepares that claim, the device manager and admission leave those
// resources alone.

// IsDRAExtendedResourceName reports whether name can be served by DRA as
// an extended resource (upstream's schedutil.IsDRAExtendedResourceName):
// an extended resource name, or the implicit name of a DeviceClass,
// deviceclass.resource.kubernetes.io/<class>.
func IsDRAExtendedResourceName(name corev1.ResourceName) bool {
	return IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

// IsDRAExtendedResource reports whether the container's resource is served
// by the pod's extended resource claim: its RequestMappings name the
// container and the resource (upstream's isDRAExtendedResource of the
// device manager and isResourceBackedByDRA of admission).
func IsDRAExtendedResource(pod *corev1.Pod, container, resource string) bool {
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		for _, r := range st.RequestMappings {
			if r.ContainerName == container && r.ResourceName == resource {
				return true
			}
		}
	}
	return false
}

// ExtendedResourceClaimName is the name of the ResourceClaim the scheduler
// allocated for the pod's DRA-backed extended resources, if it did.
func ExtendedResourceClaimName(pod *corev1.Pod) (string, bool) {
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		return st.ResourceClaimName, true
	}
	return "", false
}

// UsesResourceClaims reports whether the pod has ResourceClaims for the
// DRA manager to prepare: spec.resourceClaims, or an extended resource
// claim in its status.
func UsesResourceClaims(pod *corev1.Pod) bool {
	_, extended := ExtendedResourceClaimName(pod)
	return len(pod.Spec.ResourceClaims) > 0 || extended
}

// ContainerUsesResourceClaims reports whether the container may get
// devices from ResourceClaims: its resources.claims name some, or the
// pod's extended resource claim serves it (MapsExtendedResources).
func ContainerUsesResourceClaims(pod *corev1.Pod, c *corev1.Container) bool {
	return len(c.Resources.Claims) > 0 || MapsExtendedResources(pod, c.Name)
}

// MapsExtendedResources reports whether a RequestMapping of the pod's
// extended resource claim names the container.
func MapsExtendedResources(pod *corev1.Pod, container string) bool {
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		for _, r := range st.RequestMappings {
			if r.ContainerName == container {
				return true
			}
		}
	}
	return false
}
