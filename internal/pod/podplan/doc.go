// Package podplan decides what to do with one pod: Compute(Inputs) Actions.
// It is the heart of SyncPod and it is pure: it reads only its Inputs (the
// pod, the observed runtime state, backoff entries, probe verdicts and the
// time) and performs nothing. internal/pod/kuberuntime applies the Actions.
//
// Files:
//
//	types.go       the contract: Inputs, Actions and their parts
//	compute.go     Compute: the order of decisions, the re-created pod
//	sandbox.go     whether the latest sandbox can be kept, and why not
//	               (DecideSandbox, which the status generator shares)
//	init.go        init containers and sidecars in the current sandbox
//	containers.go  regular containers: start, restart, kill, tear down
//	backoff.go     berth's one back-off algorithm (BackoffPolicy's Holds,
//	               Next, Expired; the image pull back-off uses it too) and
//	               the CrashLoopBackOff gate over it
//	restartall.go  RestartAllContainers: whether a restart is under way,
//	               the containers to reset
//	ephemeral.go   ephemeral containers: started once, never restarted,
//	               after their target (targetContainerName) runs
//	deadline.go    activeDeadlineSeconds: when the pod's deadline passes
//	               (the worker's wake-up) and whether it has (the pod fails
//	               with DeadlineExceeded)
//	hash.go        HashContainer, the spec hash recorded on containers
//
// The rules follow upstream's computePodActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go),
// ShouldContainerBeRestarted and the kubelet's use of client-go's
// flowcontrol.Backoff, with these differences:
//
//   - Init container progress only looks at instances in the current
//     sandbox (runtimestate.Container.SandboxID), so a re-created sandbox
//     runs its init containers again without the old ones being purged.
//   - KillPod on sandbox re-creation is set only when the runtime holds
//     anything of the pod (upstream sets it always).
//   - Backoff entries are keyed by container name and carry the spec hash
//     (upstream keys by pod, name and hash): a spec change resets them.
//   - A running container with no recorded hash (0) is never taken as
//     changed.
//   - Restartable init containers (sidecars, restartPolicy Always on an
//     init container) follow KEP-753: started in order, each started
//     (running, and its startup probe passed per Probes.Started) before
//     the next init container starts; restarted whenever they exit, during
//     and after initialization; not counted when deciding that the pod is
//     done (they are stopped with the pod). Their liveness and startup
//     verdicts kill them like regular containers.
//   - RestartAllContainers (upstream's restartAllContainers in
//     computePodActions): the planner sees an exit that triggers it in the
//     runtime state itself; only "a restart was under way" comes from the
//     previous status (Inputs.RestartingAll). The previous status's
//     terminated containers are not looked at.
//   - An ephemeral container with a targetContainerName waits
//     (CreateContainerConfigError) until the target's newest instance
//     runs in the kept sandbox, and the plan carries that instance's ID;
//     upstream resolves the target when it starts the container and
//     fails the start when there is none.
//   - Pod deletion is not looked at: terminating a pod is the pod worker's
//     business, not the planner's.
//
// Everything here is safe for concurrent use: there is no shared state.
package podplan
