// Package housekeeping cleans up after pods no source wants any more: it
// forgets finished pod workers (which tells the route by which per-pod
// state ends, internal/pod/podgone, of those no longer desired), restarts
// workers for desired pods that lost theirs, has the workers kill runtime
// pods that no worker owns, announces the orphans to the route, and
// removes the directories (pod and log) and the cgroups (through
// internal/node/cm) of pods gone for good. It removes only entries it
// listed, that are real directories and whose names are valid pod UIDs,
// and only after their volumes (subPath binds and tmpfs mounts included)
// are torn down.
//
// A pod is gone for good when no source has it (neither a desired pod nor
// a mirror pod), no worker and nothing of it is in the runtime. An orphan
// is such a pod that an owner of per-pod state still holds state for (the
// route's Holders: after a restart of berth, the allocations and user
// namespaces of the pods that left while it was down; the mirror pods the
// pod startup tracker saw, once the API has them no more; any status no
// worker's end covered). Housekeeping drops none of that itself: it tells
// the route, and every owner forgets the pod. It does so on the second
// round in a row that finds the orphan, so that the state a pod gets as
// it is admitted, before it is desired and has a worker, is never taken
// for an orphan's.
//
// The sync loop runs it in a goroutine of its own, woken by the
// housekeeping tick, so that runtime work here never delays a dispatch.
// The loop therefore admits pods while a round runs, and a round never
// decides from a view older than what it acts on: the workers answer
// SyncKnownPods from the desired view read under their lock, and "gone"
// asks the live view and the live workers after each listing (a pod is
// desired before it has a worker, and has a worker before it has a
// directory, a cgroup or a sandbox). A runtime-only kill that still meets
// a worker syncing its pod is ignored by the workers.
package housekeeping
