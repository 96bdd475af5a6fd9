package podutil

import (
	corev1 "k8s.io/api/core/v1"
)

// QOSClass computes the pod's quality of service class from its requests
// and limits of cpu and memory (other resources do not count):
//
//   - BestEffort: no container (nor the pod) requests or limits either.
//   - Guaranteed: every container sets both cpu and memory limits, and the
//     summed requests equal the summed limits for each.
//   - Burstable: anything else.
//
// Pod-level resources, when set, decide alone. Init containers count like
// regular containers; ephemeral containers do not count.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	requests := corev1.ResourceList{}
	limits := corev1.ResourceList{}
	guaranteed := true
	add := func(r corev1.ResourceRequirements) {
		addQOSResources(requests, r.Requests)
		if found := addQOSResources(limits, r.Limits); found != 2 {
			guaranteed = false
		}
	}
	if pr := pod.Spec.Resources; pr != nil && (len(pr.Requests) > 0 || len(pr.Limits) > 0) {
		add(*pr)
	} else {
		for i := range pod.Spec.Containers {
			add(pod.Spec.Containers[i].Resources)
		}
		for i := range pod.Spec.InitContainers {
			add(pod.Spec.InitContainers[i].Resources)
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// addQOSResources adds the positive cpu and memory quantities of from into
// sum and returns how many of the two it found.
func addQOSResources(sum, from corev1.ResourceList) int {
	found := 0
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := from[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		found++
		total := q.DeepCopy()
		if prev, ok := sum[name]; ok {
			total.Add(prev)
		}
		sum[name] = total
	}
	return found
}
