package objectcache

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ConfigMapNames returns the names of the configMaps a pod references,
// sorted and without duplicates or empty names: configMap volumes and
// projected configMap sources, and the configMapKeyRef and envFrom
// configMapRef of every container (init, regular and ephemeral). Upstream's
// VisitPodConfigmapNames lists the same.
func ConfigMapNames(pod *corev1.Pod) []string {
	var names []string
	visitEnv(&pod.Spec, func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		cms, _ := podutil.EnvReferences(env, from)
		names = append(names, cms...)
	})
	for _, v := range pod.Spec.Volumes {
		switch s := v.VolumeSource; {
		case s.ConfigMap != nil:
			names = append(names, s.ConfigMap.Name)
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.ConfigMap != nil {
					names = append(names, src.ConfigMap.Name)
				}
			}
		}
	}
	return normalize(names)
}

// SecretNames returns the names of the secrets a pod references, sorted
// and without duplicates or empty names: imagePullSecrets, secret volumes
// and projected secret sources, and the secretKeyRef and envFrom secretRef
// of every container (init, regular and ephemeral).
//
// Upstream's VisitPodSecretNames also lists the secretRefs of volume types
// berth does not support (CSI, iSCSI, RBD, ...): berth never reads those,
// so it does not watch them.
func SecretNames(pod *corev1.Pod) []string {
	var names []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		names = append(names, ref.Name)
	}
	visitEnv(&pod.Spec, func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		_, secrets := podutil.EnvReferences(env, from)
		names = append(names, secrets...)
	})
	for _, v := range pod.Spec.Volumes {
		switch s := v.VolumeSource; {
		case s.Secret != nil:
			names = append(names, s.Secret.SecretName)
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.Secret != nil {
					names = append(names, src.Secret.Name)
				}
			}
		}
	}
	return normalize(names)
}

// visitEnv calls visit with the env and envFrom of every container of the
// spec: init, regular and ephemeral.
func visitEnv(spec *corev1.PodSpec, visit func([]corev1.EnvVar, []corev1.EnvFromSource)) {
	for _, c := range spec.InitContainers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		visit(c.Env, c.EnvFrom)
	}
}

// normalize sorts names and drops duplicates and empty names (API
// validation lets an imagePullSecrets entry have no name).
func normalize(names []string) []string {
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	slices.Sort(names)
	return slices.Compact(names)
}

// diff returns the names of next that prev lacks and those of prev that
// next lacks; both inputs are sorted and without duplicates.
func diff(prev, next []string) (added, removed []string) {
	for _, n := range next {
		if _, found := slices.BinarySearch(prev, n); !found {
			added = append(added, n)
		}
	}
	for _, n := range prev {
		if _, found := slices.BinarySearch(next, n); !found {
			removed = append(removed, n)
		}
	}
	return added, removed
}
