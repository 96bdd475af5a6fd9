package config

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/node/memorymanager"
)

// validateMemoryManager checks memoryManagerPolicy, where upstream's
// NewManager checks it at start (its wording), and reservedMemory as
// upstream's validateReservedMemoryConfiguration (its wording). The
// check that reservedMemory adds up to the node's memory reservation
// needs the machine, and is the memory manager's at start.
func validateMemoryManager(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	switch kc.MemoryManagerPolicy {
	case memorymanager.PolicyNone, memorymanager.PolicyStatic:
	case memorymanager.PolicyBestEffort:
		ps = append(ps, fieldProblem("memoryManagerPolicy", "policy %q is not available for platform %q", memorymanager.PolicyBestEffort, runtime.GOOS))
	default:
		ps = append(ps, fieldProblem("memoryManagerPolicy", "unknown policy: %q", kc.MemoryManagerPolicy))
	}
	for _, err := range validateReservedMemory(kc.ReservedMemory) {
		ps = append(ps, fieldProblem("reservedMemory", "%v", err))
	}
	return ps
}

// validateReservedMemory is upstream's validateReservedMemoryConfiguration:
// memory and hugepages-<size> only, none zero, each (NUMA node, type)
// once.
func validateReservedMemory(reserved []kubeletconfigv1beta1.MemoryReservation) []error {
	var errs []error
	seen := map[int32]map[corev1.ResourceName]bool{}
	for _, r := range reserved {
		node := r.NumaNode
		if seen[node] == nil {
			seen[node] = map[corev1.ResourceName]bool{}
		}
		for _, name := range sortedResourceNames(r.Limits) {
			q := r.Limits[name]
			if name != corev1.ResourceMemory && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				errs = append(errs, fmt.Errorf("invalid configuration: the limit type %q for NUMA node %d is not supported, only %v is accepted",
					name, node, []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceHugePagesPrefix + "<HugePageSize>"}))
			}
			if q.IsZero() {
				errs = append(errs, fmt.Errorf("invalid configuration: reserved memory may not be zero for NUMA node %d and resource %q", node, name))
			}
			if seen[node][name] {
				errs = append(errs, fmt.Errorf("invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %q", node, name))
			}
			seen[node][name] = true
		}
	}
	return errs
}

// sortedResourceNames is l's names in order, so the problems come in a
// stable order (upstream's map order is random).
func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(l))
}
