// Package simulate tests berth simulate (internal/app/simulate) against a
// real control plane (test/cluster): 50 simulated nodes register and hold
// their Leases, the real scheduler's pods run and become Ready on them (one with
// emptyDir, configMap and secret volumes),
// the application model's liveness failure restarts a container into
// CrashLoopBackOff, a Job-like pod completes, memory the model uses past
// a node's capacity evicts the BestEffort pod first, an in-place resize is
// applied, a node added through the control API becomes Ready and, its
// runtime failing every second sandbox, runs its pods after
// FailedCreatePodSandBox, and removing the pods and the nodes through the
// control API leaves no goroutines behind; each node holds a pod watch of
// its own. TestSimulatedNodesSharedWatch runs 20 nodes on one shared pod
// watch (fewer than 10 pod watches open on the API server) and the same
// pods. TestSimulateDeployment runs examples/simulate's shards with its
// RBAC's service account token. It runs when BERTH_E2E=1 (make
// e2e), under the e2e lock, and needs no containerd.
package simulate
