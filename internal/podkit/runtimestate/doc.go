// Package runtimestate holds berth's view of what the container runtime is
// running: pod sandboxes and containers as observed through the CRI, grouped
// by pod UID. Values are snapshots: whoever builds one (the PLEG relister, the
// kuberuntime manager) hands it over and never mutates it afterwards, so any
// goroutine may read a snapshot without locking.
//
// The package is pure data: it imports no gRPC, no client-go and no os/exec.
package runtimestate
