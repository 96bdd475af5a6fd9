// Package podworker owns the per-pod lifecycle: one goroutine per pod UID
// drives the pod through Waiting → Syncing → Terminating → Terminated →
// Finished by calling a Syncer, one call at a time.
//
// Files:
//   - phase.go: the Phase enum and the pure Transition function (the whole
//     lifecycle as a table).
//   - grace.go: the effective termination grace period (only ever shrinks).
//   - workers.go: Config, New, Update (handlers only enqueue; updates coalesce).
//   - loop.go: the worker goroutine (take the pending update, call the
//     Syncer, record the result).
//   - retry.go: the requeue bookkeeping (resync and backoff, brought
//     forward to a SyncResult's WakeAt: loop.go's wakeBy) and SyncDue;
//     a failure Config.Transient calls transient (a runtime call that timed
//     out) is retried after 200 ms, doubling per failure in a row up to the
//     back-off period, instead of the back-off period.
//   - static.go: static pods with the same full name start one at a time.
//   - known.go: queries for the sync loop and housekeeping, SyncKnownPods.
//   - active.go: IsActive and ActivePods, the one rule for whether an
//     admitted pod still counts against the node.
//
// The workers send the one "pod gone" signal (Config.Gone, the route of
// internal/pod/podgone), once per worker: as it finishes, when
// SyncTerminatedPod reported the pod gone (it was no longer desired and
// was removed) or the worker was a runtime pod's; else when SyncKnownPods
// forgets the finished worker because its UID is no longer desired. A
// finished worker forgotten because its UID was created again is not
// gone. OnFinished only wakes (the status writer).
//
// The package does no work of its own on pods: what a sync means is the
// Syncer's business (internal/pod/podsync); when to resync is the sync loop's
// (it calls SyncDue every second).
package podworker
