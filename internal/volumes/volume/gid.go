package volume

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// volumeGIDAnnotation is the PersistentVolume annotation whose group the
// kubelet adds to the supplemental groups of the pods using the volume
// (upstream's VolumeGidAnnotationKey).
const volumeGIDAnnotation = "pv.beta.kubernetes.io/gid"

// extraGroups are the groups pvs' pv.beta.kubernetes.io/gid annotations
// add to pod's (upstream's GetExtraSupplementalGroupsForPod and
// getExtraSupplementalGID): each parsable one not among the pod's
// supplementalGroups, once, sorted.
func extraGroups(pod *corev1.Pod, pvs []*corev1.PersistentVolume) []int64 {
	var out []int64
	for _, pv := range pvs {
		v, ok := pv.Annotations[volumeGIDAnnotation]
		if !ok {
			continue
		}
		gid, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		if sc := pod.Spec.SecurityContext; sc != nil && slices.Contains(sc.SupplementalGroups, gid) {
			continue
		}
		out = append(out, gid)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SupplementalGroups returns the groups the persistent volumes of pod's
// set-up claims add to its containers' supplemental groups (extraGroups);
// none before its SetUp. Safe for concurrent use.
func (m *Manager) SupplementalGroups(pod *corev1.Pod) []int64 {
	m.mu.Lock()
	st := m.pods[pod.UID]
	m.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	pvs := make([]*corev1.PersistentVolume, 0, len(st.claims))
	for _, c := range st.claims {
		pvs = append(pvs, c.volume)
	}
	return extraGroups(pod, pvs)
}
