package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// The pseudo-signals of local storage evictions, as upstream labels them
// in kubelet_evictions.
const (
	SignalEmptyDirFsLimit           Signal = "emptydirfs.limit"
	SignalEphemeralPodFsLimit       Signal = "ephemeralpodfs.limit"
	SignalEphemeralContainerFsLimit Signal = "ephemeralcontainerfs.limit"
)

// LocalStorageViolation returns the message of the pod's first local
// storage violation and its pseudo-signal, or "" when it has none, in upstream's order
// (localStorageEviction): an emptyDir over its sizeLimit (emptyDirs in
// memory are the kernel's to bound), the pod's ephemeral storage over the
// sum of its containers' limits, a container's writable layer and logs
// over its own limit (the writable layer counts only when the image
// filesystem is the node's).
func LocalStorageViolation(pod *corev1.Pod, s *statsapi.PodStats, dedicatedImageFs bool) (string, Signal) {
	if s == nil {
		return "", ""
	}
	used := map[string]uint64{}
	for _, v := range s.VolumeStats {
		if v.UsedBytes != nil {
			used[v.Name] = *v.UsedBytes
		}
	}
	for _, v := range pod.Spec.Volumes {
		ed := v.EmptyDir
		if ed == nil || ed.Medium == corev1.StorageMediumMemory || ed.SizeLimit == nil || ed.SizeLimit.Sign() != 1 {
			continue
		}
		if u, ok := used[v.Name]; ok && quantity(int64(u)).Cmp(*ed.SizeLimit) > 0 {
			return fmt.Sprintf(emptyDirMessageFmt, v.Name, ed.SizeLimit.String()), SignalEmptyDirFsLimit
		}
	}
	if limit, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[corev1.ResourceEphemeralStorage]; ok {
		var total int64
		if es := s.EphemeralStorage; es != nil && es.UsedBytes != nil {
			total = int64(*es.UsedBytes)
		}
		if quantity(total).Cmp(limit) > 0 {
			return fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String()), SignalEphemeralPodFsLimit
		}
	}
	if msg := containerViolation(pod, s, dedicatedImageFs); msg != "" {
		return msg, SignalEphemeralContainerFsLimit
	}
	return "", ""
}

func containerViolation(pod *corev1.Pod, s *statsapi.PodStats, dedicatedImageFs bool) string {
	limits := map[string]corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		limits[c.Name] = c.Resources.Limits
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podutil.IsSidecar(c) {
			limits[c.Name] = c.Resources.Limits
		}
	}
	for _, cs := range s.Containers {
		limit, ok := limits[cs.Name][corev1.ResourceEphemeralStorage]
		if !ok || limit.Value() == 0 {
			continue
		}
		var used uint64
		if cs.Logs != nil && cs.Logs.UsedBytes != nil {
			used += *cs.Logs.UsedBytes
		}
		if !dedicatedImageFs && cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil {
			used += *cs.Rootfs.UsedBytes
		}
		if limit.Cmp(*quantity(int64(used))) < 0 {
			return fmt.Sprintf(containerEphemeralStorageMessageFmt, cs.Name, limit.String())
		}
	}
	return ""
}
