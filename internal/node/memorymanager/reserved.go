package memorymanager

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// SystemReserved is what reservedMemory keeps from pods on each NUMA node:
// node ID -> memory type -> bytes.
type SystemReserved map[int]map[corev1.ResourceName]uint64

// isMemoryType says whether name is memory or hugepages-<size>.
func isMemoryType(name corev1.ResourceName) bool {
	return name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// systemReserved is upstream's getSystemReservedMemory, run at start by
// the static policy: every NUMA node named must exist, and for memory and
// each huge page size the sum over the nodes must equal the node's
// reservation (kubeReserved + systemReserved + the hard eviction
// threshold: nodestatus.Reservation), with upstream's wording.
func systemReserved(nodes []NUMANode, reservation corev1.ResourceList, reserved []kubeletconfigv1beta1.MemoryReservation) (SystemReserved, error) {
	exists := map[int]bool{}
	out := SystemReserved{}
	for _, n := range nodes {
		exists[n.ID] = true
		out[n.ID] = map[corev1.ResourceName]uint64{}
	}
	total := map[corev1.ResourceName]resource.Quantity{}
	for _, r := range reserved {
		if !exists[int(r.NumaNode)] {
			return nil, fmt.Errorf("the reserved memory configuration references a NUMA node %d that does not exist on this machine", r.NumaNode)
		}
		for name, q := range r.Limits {
			if v, ok := total[name]; ok {
				q.Add(v)
			}
			total[name] = q
		}
	}
	types := map[corev1.ResourceName]bool{}
	for name := range total {
		types[name] = true
	}
	for name := range reservation {
		if isMemoryType(name) {
			types[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(types)) {
		want := resource.NewQuantity(0, resource.DecimalSI)
		if q, ok := reservation[name]; ok {
			want.Add(q)
		}
		got := resource.NewQuantity(0, resource.DecimalSI)
		if q, ok := total[name]; ok {
			got.Add(q)
		}
		if !want.Equal(*got) {
			return nil, fmt.Errorf("the total amount %q of type %q is not equal to the value %q determined by Node Allocatable feature", got.String(), name, want.String())
		}
	}
	for _, r := range reserved {
		for name, q := range r.Limits {
			v, ok := q.AsInt64()
			if !ok {
				return nil, fmt.Errorf("could not covert a variable of type Quantity to int64")
			}
			out[int(r.NumaNode)][name] = uint64(v)
		}
	}
	return out, nil
}
