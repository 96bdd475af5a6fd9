// Package state is the CPU manager's checkpoint file,
// <root-dir>/cpu_manager_state, in upstream v1.37's exact format (its
// "v4" checkpoint): the v2 fields (policyName, defaultCpuSet, entries,
// checksum) that older kubelets read, and data, the same content as a JSON
// string, with dataChecksum, which v1.37 verifies.
//
// Both checksums are FNV-32a over go-spew's rendering of a Go value
// (k8s.io/utils/dump.ForHash), as upstream's checkpointmanager/checksum:
// dataChecksum over the data string, checksum over the v2 struct as the
// type state.CPUManagerCheckpoint with checksum 0. That rendering names
// the Go types, which is why this package is called state and its type
// CPUManagerCheckpointV2 (renamed in the hash, as upstream does); a test
// pins both against samples from upstream's tests.
//
// Encode and Decode are pure; Read and Write do the file, Write atomically
// (a temporary file renamed over the old one, as upstream's file store).
package state
