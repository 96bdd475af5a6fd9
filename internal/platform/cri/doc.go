// Package cri owns berth's connection to the container runtime: dialing the
// CRI v1 endpoints (dial.go), the one pair of gRPC interceptors that every
// call goes through (interceptor.go: request timeouts, error classification,
// the Observe instrumentation hook), the classification of runtime errors
// into sentinels (errors.go, the only file in berth that reads gRPC codes),
// and the startup and health checks of the runtime (verify.go), and the
// periodic health verdict the sync loop and node status read (health.go).
//
// Callers use the generated clients in Client.Runtime and Client.Image
// directly; this package adds no wrapper methods around individual RPCs.
//
// Subpackages: crifake is an in-memory runtime for tests, critest is the
// behaviour suite that runs against both crifake and real containerd.
package cri
