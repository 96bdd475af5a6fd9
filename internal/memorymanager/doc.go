// Package memorymanager is berth's memory manager, as upstream v1.37's
// pkg/kubelet/cm/memorymanager.
//
//	policy.go   the memoryManagerPolicy names (internal/config validates
//	            them at load, with reservedMemory)
//	manager.go  Manager: restores <root-dir>/memory_manager_state at start,
//	            refusing a checkpoint of another policy and writing a new
//	            one when there is none, as upstream's Start
//	state/      the checkpoint in upstream's exact format and checksums
//
// berth runs the None policy: nothing is pinned, containers are created
// without cpuset.mems, and the checkpoint records the policy, as
// upstream's does. Static (memory and huge pages per NUMA node for
// Guaranteed pods) is refused at load as not implemented yet; BestEffort
// is upstream's Windows-only policy, refused as upstream refuses it on
// Linux.
package memorymanager
