// Package mirrorpod keeps a static pod's mirror pod in the API server: the
// read-only API object through which the cluster sees a pod that berth runs
// from a file or a URL.
//
//   - Plan (plan.go) is a pure function from the static pod, its current
//     mirror pod and whether the pod worker is still terminating a pod of
//     that name to an Action: None, Create, Delete or Recreate. It follows
//     the upstream kubelet's SyncPod mirror block (an outdated or deleting
//     mirror is deleted and created again, a missing one is created) and
//     its housekeeping (a mirror without a static pod is deleted once no
//     pod of that name is terminating any more).
//   - Client (client.go) performs the actions: Create copies the static pod
//     with the kubernetes.io/config.mirror annotation and a controller
//     owner reference to the Node, as the NodeRestriction admission plugin
//     requires; Delete removes a mirror with grace period 0 and a UID
//     precondition. Apply performs what Plan returned.
//   - Keeper (keeper.go) is podsync's Mirrors: on a static pod's sync it
//     plans with the mirror pod the API source reports and whether the
//     pod's worker is stopping it, and performs the plan with Client.
//
// The pod syncer decides when to sync a mirror; the wiring hands the
// Keeper its lookups. This package keeps no state of its own.
package mirrorpod
