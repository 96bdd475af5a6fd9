// Package podsync is the pod workers' Syncer: for each phase of a pod it
// generates the pod's API status, prepares the pod's directories and has
// the runtime manager converge, kill or remove the pod.
//
// SyncPod takes the pod's snapshot and computes its plan once
// (podplan.Compute); the same plan feeds the status generator (its waiting
// reasons, where the pod is in a RestartAllContainers restart) and the
// executor (kuberuntime.Apply). Nobody derives a decision about the pod
// again. The one fact the plan takes from the previous status is whether a
// RestartAllContainers restart was under way (its AllContainersRestarting
// condition); after a reset SyncPod asks the pod worker for another sync at
// once (podworker.SyncAgain).
//
// What berth remembers about a pod between syncs is one record per UID,
// owned here: the CrashLoopBackOff entries, the image pull back-off and the
// start failures of the last apply (ErrImagePull, ...). The last sync of
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
