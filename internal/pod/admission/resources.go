package admission

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// amounts is a resource vector in the units upstream's scheduler counts:
// millicores, bytes, and the value of every scalar resource.
type amounts struct {
	milliCPU, memory, ephemeral int64
	pods                        int64
	scalar                      map[corev1.ResourceName]int64
}

// toAmounts is list's amounts, of the resources keep keeps (nil: all).
func toAmounts(list corev1.ResourceList, keep func(corev1.ResourceName) bool) amounts {
	a := amounts{scalar: map[corev1.ResourceName]int64{}}
	a.add(list, keep)
	return a
}

func (a *amounts) add(list corev1.ResourceList, keep func(corev1.ResourceName) bool) {
	for name, q := range list {
		if keep != nil && !keep(name) {
			continue
		}
		switch name {
		case corev1.ResourceCPU:
			a.milliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			a.memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			a.ephemeral += q.Value()
		case corev1.ResourcePods:
			a.pods += q.Value()
		default:
			if isScalar(name) {
				a.scalar[name] += q.Value()
			}
		}
	}
}

// shortfall is a resource the node lacks for the pod.
type shortfall struct {
	name                      corev1.ResourceName
	requested, used, capacity int64
}

// fit returns the resources the node's allocatable lacks for pod beside the
// active pods, in upstream's order: pods, cpu, memory, ephemeral-storage,
// then the scalar resources (by name).
func fit(pod *corev1.Pod, node *corev1.Node, active []*corev1.Pod) []shortfall {
	alloc := toAmounts(node.Status.Allocatable, nil)
	var out []shortfall
	if n := int64(len(active)); n+1 > alloc.pods {
		out = append(out, shortfall{corev1.ResourcePods, 1, n, alloc.pods})
	}
	// Upstream drops the pod's requests of extended resources the node does
	// not know (cluster-level resources) and those DRA serves before it
	// checks (removeMissingExtendedResources).
	known := func(name corev1.ResourceName) bool {
		if !isExtended(name) {
			return true
		}
		_, ok := node.Status.Allocatable[name]
		return ok
	}
	want := toAmounts(podutil.PodRequests(withoutDRAExtendedRequests(pod)), known)
	used := toAmounts(nil, nil)
	for _, p := range active {
		used.add(podutil.HeldRequests(p), nil)
	}
	check := func(name corev1.ResourceName, want, used, alloc int64) {
		if want > 0 && want > alloc-used {
			out = append(out, shortfall{name, want, used, alloc})
		}
	}
	check(corev1.ResourceCPU, want.milliCPU, used.milliCPU, alloc.milliCPU)
	check(corev1.ResourceMemory, want.memory, used.memory, alloc.memory)
	check(corev1.ResourceEphemeralStorage, want.ephemeral, used.ephemeral, alloc.ephemeral)
	names := make([]corev1.ResourceName, 0, len(want.scalar))
	for name := range want.scalar {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		check(name, want.scalar[name], used.scalar[name], alloc.scalar[name])
	}
	return out
}

// withoutDRAExtendedRequests is the pod without the requests its
// extended resource claim serves (a DRA extended resource name that a
// RequestMapping maps for the container), as upstream's admission: DRA
// allocated them, the node's allocatable need not hold them (for
// deviceclass.resource.kubernetes.io/<class> it never does). Containers
// and init containers, requests only; the pod itself when nothing is
// dropped.
func withoutDRAExtendedRequests(pod *corev1.Pod) *corev1.Pod {
	if pod.Status.ExtendedResourceClaimStatus == nil {
		return pod
	}
	out := pod.DeepCopy()
	filter := func(cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			for name := range c.Resources.Requests {
				if podutil.IsDRAExtendedResourceName(name) && podutil.IsDRAExtendedResource(pod, c.Name, string(name)) {
					delete(c.Resources.Requests, name)
				}
			}
		}
	}
	filter(out.Spec.Containers)
	filter(out.Spec.InitContainers)
	return out
}

// isScalar reports whether upstream's scheduler counts name as a scalar
// resource: extended resources, hugepages, kubernetes.io/-prefixed native
// resources and attachable volumes.
func isScalar(name corev1.ResourceName) bool {
	return isExtended(name) || isHugePages(name) || isPrefixedNative(name) ||
		strings.HasPrefix(string(name), corev1.ResourceAttachableVolumesPrefix)
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isPrefixedNative(name corev1.ResourceName) bool {
	return strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtended reports whether name is an extended resource
// (podutil.IsExtendedResourceName).
func isExtended(name corev1.ResourceName) bool { return podutil.IsExtendedResourceName(name) }
