package podutil

import corev1 "k8s.io/api/core/v1"

// EnvReferences lists the configMaps and secrets one container's env and
// envFrom read, each once, in first-use order (envFrom, then env). The one
// place that knows where an environment names API objects: kuberuntime
// fetches these before building the environment, and the object cache
// watches them for every container of a pod.
func EnvReferences(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) (configMaps, secrets []string) {
	seenCM, seenS := map[string]bool{}, map[string]bool{}
	addCM := func(n string) {
		if !seenCM[n] {
			seenCM[n] = true
			configMaps = append(configMaps, n)
		}
	}
	addS := func(n string) {
		if !seenS[n] {
			seenS[n] = true
			secrets = append(secrets, n)
		}
	}
	for _, from := range envFrom {
		switch {
		case from.ConfigMapRef != nil:
			addCM(from.ConfigMapRef.Name)
		case from.SecretRef != nil:
			addS(from.SecretRef.Name)
		}
	}
	for _, e := range env {
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.ConfigMapKeyRef != nil:
			addCM(e.ValueFrom.ConfigMapKeyRef.Name)
		case e.ValueFrom.SecretKeyRef != nil:
			addS(e.ValueFrom.SecretKeyRef.Name)
		}
	}
	return configMaps, secrets
}
