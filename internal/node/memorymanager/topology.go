package memorymanager

import (
	corev1 "k8s.io/api/core/v1"
)

// NUMANode is one NUMA node as the memory manager sees it (upstream's
// cadvisor Topology node): its memory and its huge pages, in bytes.
type NUMANode struct {
	ID     int
	Memory uint64
	// HugePages is the bytes of huge pages of each size the node has,
	// by resource name (hugepages-2Mi).
	HugePages map[corev1.ResourceName]uint64
}
