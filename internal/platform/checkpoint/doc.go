// Package checkpoint is the file side of the kubelet checkpoints berth
// keeps in its root directory (cpu_manager_state, memory_manager_state):
// a size-capped read, an atomic replace, and upstream's checksum hash
// (pkg/kubelet/checkpointmanager: FNV-32a over a dump.ForHash rendering).
// What each file holds and how it is checked is its own package's.
package checkpoint
