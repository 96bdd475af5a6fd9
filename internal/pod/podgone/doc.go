// Package podgone is the one route by which per-pod state ends (STYLE
// rule 20).
//
// An owner is any component that keeps state keyed by pod UID beyond one
// call: a map of records, a checkpoint, a tracker. Each implements
// Forget(ctx, uid), which drops everything it holds for the pod and is
// idempotent, and is registered with the node's Route by the wiring
// (internal/app/agent) before the pod workers start. The Route is told
// that a pod is gone (Gone) by two callers only, and calls every owner's
// Forget, in the order they registered:
//
//   - the pod workers (internal/pod/podworker), once per worker, when the
//     worker is finished and its pod is no longer desired: at once when
//     the last sync removed the pod (it was not desired then), else when
//     housekeeping's SyncKnownPods finds it no longer desired; a runtime
//     pod no source knows, once its worker killed and removed it;
//   - housekeeping (internal/pod/housekeeping), for orphans: a pod some
//     Holder still holds state for, that no source has (neither a desired
//     pod nor a mirror pod), that has no worker and nothing in the
//     runtime, two rounds in a row (so that a pod whose state is created
//     while a round runs, before its worker starts, is never taken for
//     one). After a restart of berth these are the pods that left while
//     it was down; otherwise a leak one owner would have had.
//
// No owner ends a pod's state on its own when the pod is gone. An owner
// may drop state earlier for a reason of its own (a terminated pod is no
// longer probed, its user namespace is freed, its CPUs go back to the
// shared pool), but the end of a pod that is gone is Gone's.
//
//	route.go  Owner, Holder, Func; Route: Register, Gone, Held, Owners
package podgone
