// Package memorymanager is berth's memory manager, as upstream v1.37's
// pkg/kubelet/cm/memorymanager.
//
// The decisions are pure functions of plain values:
//
//	policy.go    the memoryManagerPolicy names (internal/config validates
//	             them at load, with reservedMemory)
//	topology.go  NUMANode: a node's memory and huge pages
//	reserved.go  upstream's start check of reservedMemory: its NUMA nodes
//	             exist, and per memory type it adds up to the node's
//	             reservation (kubeReserved + systemReserved + hard eviction)
//	static.go    Static: that check, and the machine state with nothing
//	             assigned
//	hints.go     the NUMA sets that can hold a request (single- and
//	             multi-NUMA groups kept apart), the narrowest preferred
//	allocate.go  AllocatePod: a Guaranteed pod's containers, init ones
//	             first, get memory and huge page blocks on the best set,
//	             init containers' memory reused by the containers after
//	             them; Release gives a container's blocks back; upstream's
//	             admission reason
//
// and the edge:
//
//	manager.go   Manager: restores <root-dir>/memory_manager_state at
//	             start, refusing a checkpoint of another policy and writing
//	             a new one when there is none, as upstream's Start
//	state/       the checkpoint in upstream's exact format and checksums
//
// berth runs the None policy: nothing is pinned, containers are created
// without cpuset.mems, and the checkpoint records the policy, as
// upstream's does. The Static policy's decisions are here and tested on
// fake multi-NUMA machines, but Static is refused at load until the
// manager runs them (NUMA discovery from sysfs, admission, cpuset.mems at
// container creation, release on removal, the restored state's check).
// BestEffort is upstream's Windows-only policy, refused as upstream
// refuses it on Linux.
package memorymanager
