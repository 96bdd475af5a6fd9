// Package topology is berth's topology manager, as upstream v1.37's
// pkg/kubelet/cm/topologymanager: with topologyManagerPolicy other than
// none, the hint providers (the CPU manager; the memory manager when it
// comes) say from which NUMA nodes they could serve a container (or a
// whole pod, with topologyManagerScope pod), the policy merges their hints
// into one affinity, refuses the pod when restricted or single-numa-node
// cannot align it (reason TopologyAffinityError), and the providers then
// allocate with that affinity.
//
// The decisions are pure functions of plain values:
//
//	options.go  policy, scope and option names; ParseOptions (config.Load
//	            calls it)
//	mask.go     Mask (upstream's bitmask) and Hint (TopologyHint)
//	numa.go     NUMAInfo: the NUMA nodes and distances (NUMAInfoOf the
//	            host topology internal/platform/machine reads from sysfs)
//	policy.go   Policy.Merge: the four policies over every permutation of
//	merger.go   the providers' hints, upstream's HintMerger rule for rule
//	            (preferred first, prefer-closest-numa-nodes' distances)
//
// and the edge:
//
//	manager.go  Manager: the HintProvider interface, the scope and admission
package topology
