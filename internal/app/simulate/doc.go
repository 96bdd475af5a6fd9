// Package simulate is the wiring of berth simulate (issue 28): many
// berth nodes in one process, each the real node (agent.RunSimulated:
// its own Node and Lease, API pod source, sync loop, pod workers,
// podplan, status writer, node status, admission, prober, PLEG and
// kuberuntime) on its own in-memory CRI (crifake), with the application
// model (internal/sim) performed on it and answering its probes.
//
// Shared by every node: the binary, the scheme, the rest config and so
// the HTTP transport pool, and with SharedPodWatch one pod watch
// (internal/sim/podfeed). Per node: its runtime, its components, its
// directory under the root (pod and log directories, volumes' files;
// nothing is mounted).
//
// sim.go holds the Sim (the set of nodes, Add and Remove while it runs),
// node.go one node's configuration and start, rules.go the per-method and
// per-node latencies and failures of the runtimes (--latency, --fail),
// control.go the control API (--control-address), flags.go the command's
// flags (cmd/berth; here so tests parse examples/simulate's arguments with
// them).
package simulate
