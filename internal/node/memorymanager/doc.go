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
//	restore.go   Restore: a restored state checked against the machine,
//	             as upstream's validateState
//
// and the edge:
//
//	manager.go   Manager: restores <root-dir>/memory_manager_state at
//	             start, refusing a checkpoint of another policy and writing
//	             a new one when there is none, as upstream's Start; with
//	             Static, checks the restored state against the machine
//	             (Restore), admits pods (stale containers' memory released
//	             first, once every pod source is ready, as upstream's
//	             removeStaleState), answers a container's cpuset.mems and
//	             the container's and allocatable memory blocks the pod
//	             resources API reports;
//	             Forget gives back the memory of a pod that is gone (the
//	             route by which per-pod state ends, internal/pod/podgone)
//	discover.go  NodesOf: the NUMA nodes' memory from the host topology
//	             internal/platform/machine reads from sysfs (a host without NUMA
//	             is node 0 with all the memory)
//	state/       the checkpoint in upstream's exact format and checksums
//
// With None (the default) nothing is pinned and the checkpoint records
// the policy, as upstream's does. With Static, internal/app/agent admits pods
// through the manager after node shutdown's check and before the
// scheduler's predicates, and kuberuntime creates containers with its
// cpuset.mems (LinuxContainerResources.CpusetMems). BestEffort is
// upstream's Windows-only policy, refused as upstream refuses it on
// Linux.
//
// Not done: there is no topology manager, so each container takes the
// best of its own hints, which is what upstream does under the topology
// manager's none policy; pod-level resources (PodLevelResourceManagers,
// off by default) get nothing, as upstream with the gate off; the memory
// manager's metrics are not exported.
package memorymanager
