// Package housekeeping cleans up after pods no source wants any more: it
// forgets finished pod workers, restarts workers for desired pods that lost
// theirs, has the workers kill runtime pods that no worker owns, and removes
// the directories (pod and log), the cgroups (through internal/node/cm) and the
// user namespace IDs (through internal/node/userns) of pods gone for good. It removes only entries it listed, that are real
// directories and whose names are valid pod UIDs, and only after their volumes (subPath binds and tmpfs mounts
// included) are torn down.
//
// The sync loop runs it in a goroutine of its own, woken by the
// housekeeping tick, so that runtime work here never delays a dispatch.
package housekeeping
