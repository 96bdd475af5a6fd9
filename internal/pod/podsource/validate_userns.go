package podsource

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateHostUsers refuses what upstream's validateHostUsers refuses of
// a pod with hostUsers: false, with its field paths: the host's network
// (UserNamespacesHostNetworkSupport is alpha, off), PID and IPC
// namespaces, and volumeDevices, which cannot be idmapped.
func validateHostUsers(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var allErrs field.ErrorList
	if spec.HostNetwork {
		allErrs = append(allErrs, field.Forbidden(path.Child("hostNetwork"), "when `hostUsers` is false"))
	}
	if spec.HostPID {
		allErrs = append(allErrs, field.Forbidden(path.Child("HostPID"), "when `hostUsers` is false"))
	}
	if spec.HostIPC {
		allErrs = append(allErrs, field.Forbidden(path.Child("HostIPC"), "when `hostUsers` is false"))
	}
	visit := func(name string, cs []corev1.Container) {
		for i := range cs {
			if len(cs[i].VolumeDevices) > 0 {
				allErrs = append(allErrs, field.Forbidden(path.Child(name).Index(i).Child("volumeDevices"), "when `hostUsers` is false"))
			}
		}
	}
	visit("initContainers", spec.InitContainers)
	visit("containers", spec.Containers)
	for i := range spec.EphemeralContainers {
		if len(spec.EphemeralContainers[i].VolumeDevices) > 0 {
			allErrs = append(allErrs, field.Forbidden(path.Child("ephemeralContainers").Index(i).Child("volumeDevices"), "when `hostUsers` is false"))
		}
	}
	return allErrs
}
