// Package cpumanager is berth's CPU manager, as upstream v1.37's
// pkg/kubelet/cm/cpumanager: with cpuManagerPolicy static, the containers
// of Guaranteed pods that request a whole number of CPUs get CPUs of their
// own; every other container runs on the shared pool, the CPUs nobody
// holds (the reserved ones included, unless strict-cpu-reservation).
// With none (the default) nothing is pinned, and the checkpoint still
// records the policy, as upstream's does.
//
// The decisions are pure functions of plain values:
//
//	topology.go  Topology and CPUDetails: which socket, NUMA node, core and
//	             uncore cache each CPU is on
//	discover.go  TopologyOf: that topology from the host's, which
//	             internal/platform/machine reads from sysfs (ReadTopology)
//	assign.go    takeByTopology: upstream's packed best-fit allocation
//	             (whole NUMA nodes or sockets, whole cores, then threads)
//	             and its spread order (distribute-cpus-across-cores)
//	options.go   ParseOptions: cpuManagerPolicyOptions, their gates and
//	             exclusions (config.Load calls it)
//	state.go     State: the shared pool and each container's CPUs
//	policy.go    Static: the reserved CPUs, the checks of a restored state,
//	             a pod's allocation (init containers' CPUs reused by the
//	             containers after them), full-pcpus-only's
//	             SMTAlignmentError, release; upstream's admission reasons
//	reconcile.go planUpdates: which running containers need a new cpuset
//	hints.go     the static policy's NUMA hints for a container or a pod
//	             (upstream's generateCPUTopologyHints) and its allocation
//	             with the topology manager's affinity (aligned CPUs first)
//
// and the edge:
//
//	provider.go  Manager as internal/node/topology's HintProvider: hints,
//	             Allocate with the merged affinity, RemoveStale
//
//	state/       the checkpoint, <root-dir>/cpu_manager_state, in upstream's
//	             format and checksums
//	manager.go   Manager: restores the checkpoint (refusing another
//	             policy's), admits pods (after releasing the CPUs of pods no
//	             longer active, as upstream's removeStaleState), answers the
//	             cpuset a container is created with and the exclusive and
//	             allocatable CPUs the pod resources API reports, persists
//	             every change; Forget releases the CPUs of a pod that is gone (the route
//	             by which per-pod state ends, internal/pod/podgone)
//	reconcile.go Run: every cpuManagerReconcilePeriod, stale state removed
//	             and running containers' cpusets set through the CRI
//	             (UpdateContainerResources), as upstream's reconcileState
//
// Not done (refused at load): the distribute-cpus-across-numa,
// align-by-socket and prefer-align-cpus-by-uncorecache options, pod-level
// resources (PodLevelResourceManagers) and in-place resize of exclusive
// CPUs. With topologyManagerPolicy none the agent admits through Admit
// (the whole pod at once); with another, internal/node/topology asks for hints
// and allocates container by container through provider.go.
package cpumanager
