// Package podsync is the pod workers' Syncer: for each phase of a pod it
// generates the pod's API status, prepares the pod's directories and has
// the runtime manager converge, kill or remove the pod.
//
// SyncPod takes one snapshot of the pod (snapshot.go): the pod with its
// allocation, its runtime state, the probe results, its previous status,
// its actuation and the time, each read once. It computes the pod's plan
// once over it (podplan.Compute); the status generator
// (podstatus.Generate) takes the same snapshot and the same plan (its
// waiting reasons, where the pod is in a RestartAllContainers restart),
// and the executor (kuberuntime.Apply) the same plan. Nobody derives a
// decision about the pod again. What the plan takes from the previous
// status is its start time and phase (activeDeadlineSeconds) and whether
// a RestartAllContainers restart was under way (its
// AllContainersRestarting condition); after a reset SyncPod asks the pod
// worker for another sync at once (podworker.SyncAgain). A status
// generated again after the apply (new start failures, a failed resize)
// comes from the same snapshot. SyncTerminatingPod observes the pod again
// after its kill (the runtime is read again) and takes a second snapshot
// for that status.
//
// The pod is done when its status's phase is terminal. The phase is the
// status generator's one decision (podstatus/phase.go), over container
// statuses that the plan's waiting reasons and the previous status shape;
// the planner does not decide it a second time: it would have to derive
// the container statuses again, or disagree (a Never pod whose exited
// container the runtime removed is Succeeded by its status, while the
// planner, seeing no instance, would start it again).
//
// The allocation manager is read once, for the snapshot, and told what a
// step of the sync decided or applied with one Record call (resize.go).
//
// Files:
//
//	syncer.go    Config, the Syncer, the three syncs, the pod's record
//	snapshot.go  the snapshot, the planner's view of it, generating and
//	             storing a status from it
//	resize.go    the Allocation role: the first actuation, the plan's
//	             resize progress, what the apply set
//	deadline.go  activeDeadlineSeconds: the termination, the start time
//	claims.go    the Claims role: a pod's ResourceClaims prepared before its
//	             sandbox is created (FailedPrepareDynamicResources while it
//	             waits); SyncTerminatingPod unprepares them after the kill
//	wait.go      what stopped a sync before the sandbox (podstatus.PodWait)
//	trace.go     the syncs' spans
//
// What berth remembers about a pod between syncs is one record per UID,
// owned here: the CrashLoopBackOff entries, the image pull back-off, the
// start failures of the last apply (ErrImagePull, ...) and what stopped
// the last sync before the pod's sandbox (wait.go: a volume, the claims,
// the sandbox or its network failing, counted while it repeats), which
// the pod's PodReadyToStartContainers message gives. The last sync of
// the pod's worker, SyncTerminatedPod, drops it (a pod created again with
// the same UID starts afresh); Forget, which the route by which per-pod
// state ends (internal/pod/podgone) calls, drops whatever is left.
//
// podsync keeps no other forget path: SyncTerminatedPod reports a pod it
// removed (no longer desired) as gone, and the pod's worker tells the
// route, which has every owner (the status store, the allocations, the
// prober, ...) forget it.
//
// podsync is where pods are registered with the node's source of
// configMaps and secrets (internal/volumes/objectcache): SyncPod registers the pod
// before its volumes, environment and pull secrets read them, and
// SyncTerminatedPod unregisters it once its volumes are torn down, as
// upstream's SyncPod and SyncTerminatedPod do. SyncTerminatedPod also
// releases the pod's user namespace IDs (internal/node/userns), as upstream's.
//
// A plan whose Deadline is exceeded (activeDeadlineSeconds) ends the pod:
// SyncPod records podstatus.DeadlineExceeded as the pod's termination (and
// a Normal DeadlineExceeded event, as upstream), so the status is Failed
// and the worker terminates the pod. Otherwise the plan's deadline is the
// SyncResult's WakeAt: the worker syncs the pod again by then.
//
// trace.go wraps the three syncs in spans with upstream's names (syncPod,
// syncTerminatingPod, syncTerminatedPod) and attributes; the CRI calls a
// sync makes are their children (internal/platform/tracing).
package podsync
