// Package state is the memory manager's checkpoint file,
// <root-dir>/memory_manager_state, in upstream v1.37's exact format (its
// "v3" checkpoint): the v1 fields (policyName, machineState, entries,
// checksum) that older kubelets read, and data, the same content as a JSON
// string, with dataChecksum, which v1.37 verifies.
//
// Both checksums are FNV-32a over go-spew's rendering of a Go value
// (k8s.io/utils/dump.ForHash), as upstream's checkpointmanager/checksum:
// dataChecksum over the data string, checksum over the v1 struct as the
// type state.MemoryManagerCheckpoint with checksum 0. That rendering names
// the Go types and their fields (state.NUMANodeMap, state.MemoryTable,
// v1.ResourceName ...), which is why this package is called state and its
// types carry upstream's names; a test pins both checksums against samples
// from upstream's tests.
//
// The types (MemoryTable, NUMANodeState, NUMANodeMap, Block,
// ContainerMemoryAssignments) are plain values that the memory manager's
// pure policy reads and returns. Encode and Decode are pure; Read and
// Write do the file, Write atomically (a temporary file renamed over the
// old one, as upstream's file store).
package state
