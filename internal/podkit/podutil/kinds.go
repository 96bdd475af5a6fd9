package podutil

import corev1 "k8s.io/api/core/v1"

// IsSidecar reports whether the init container c is a restartable init
// container (a sidecar, KEP-753): its restartPolicy is Always. Only init
// containers may carry that policy for this meaning; callers pass init
// containers.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// IsTerminal reports whether a pod phase is final: Succeeded or Failed.
func IsTerminal(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// IsSidecarIn reports whether c, a container of spec of either kind, is one
// of its sidecars: an init container with restartPolicy Always. A regular
// container may carry restartPolicy Always too (ContainerRestartRules),
// which does not make it a sidecar.
func IsSidecarIn(spec *corev1.PodSpec, c *corev1.Container) bool {
	if !IsSidecar(c) {
		return false
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}

// EphemeralAsContainer returns an ephemeral container's spec as a
// Container (the same fields; API validation leaves empty the ones an
// ephemeral container may not have), as upstream converts it for the
// runtime and the status. The result shares memory with ec.
func EphemeralAsContainer(ec *corev1.EphemeralContainer) *corev1.Container {
	return (*corev1.Container)(&ec.EphemeralContainerCommon)
}

// FullName is upstream's pod full name, "<name>_<namespace>": the name
// that is unique among a node's pods across all sources (a static pod and
// its mirror share it).
func FullName(pod *corev1.Pod) string {
	return pod.Name + "_" + pod.Namespace
}
