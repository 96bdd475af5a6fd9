// Package allocation owns what berth has allocated to each pod and what it
// has actuated, the two halves of in-place pod resize
// (InPlacePodVerticalScaling, GA in v1.37):
//
//   - the allocation: the resources a pod was admitted with, or last
//     resized to, per container (regular and init) and for the pod
//     (spec.resources). A pod runs with its allocation, never with its spec
//     directly: Apply overlays it on the pod the source gives. A resize
//     (the spec's resources differ from the allocation) is admitted or not
//     by Manager.Resize, which the sync loop calls on every update; an
//     admitted resize becomes the new allocation, one that does not fit is
//     pending (PodResizePending, Deferred or Infeasible) and is retried,
//     as upstream, on another resize, when a pod leaves, when a pod's
//     status shows it ended or a decrease applied (Manager.Reconciled),
//     and every three minutes;
//   - the actuation: the resources berth last set on each running
//     container and on the pod cgroup. The planner (podplan) compares it
//     with the allocation and plans an in-place update or a restart per
//     the container's resizePolicy; podsync records what the runtime
//     applied.
//
// A pod's sync (internal/pod/podsync) uses two calls (sync.go): Snapshot,
// the pod with its allocation, its actuation and its resize conditions,
// read once for the sync's snapshot; and Record, what a step of the sync
// decided or applied (the actuation, the PodResizeInProgress condition
// the plan sets or clears or a failed resize marks Error, a terminal pod's
// conditions going), answered with what is held afterwards. Record
// records the sync's resize events (ResizeCompleted, ResizeError), as
// upstream's SyncPod does.
//
// Both are kept in upstream's checkpoint files in the root directory,
// allocated_pods_state and actuated_pods_state (a JSON envelope with
// upstream's checksum), so a restart of berth keeps what was admitted and
// what was set. The resize conditions (PodResizePending,
// PodResizeInProgress) live here too (conditions.go); podstatus places
// them.
//
// A pod's allocation, actuation and resize conditions end with the pod:
// Forget, which the route by which per-pod state ends
// (internal/pod/podgone) calls; HeldPods says which pods they are held
// for, so housekeeping finds the ones that left while berth was down.
//
// The Manager's decisions feed upstream's resize metrics (Config.Metrics,
// metrics.go): the changes each update requests (requested.go), the
// infeasible resizes by reason (feasible.go), the pending and in-progress
// gauges, the Deferred resizes accepted by retry trigger and how long
// they waited.
package allocation
