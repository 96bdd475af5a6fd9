// Package statussync writes the statuses berth generates for its pods to the
// API server, as the upstream kubelet's status manager does.
//
// podsync stores each pod's generated v1.PodStatus in a podstatus.Store,
// keyed by the pod's UID. The Syncer's one goroutine (Run) reads the store
// when it signals a change or Wake names a pod, and every SyncPeriod
// (10 s). The periodic pass looks at every pod; the others look only at
// the pods changed since the last pass (the store's change count,
// podstatus.Store.EntriesSince), the pods woken, and the pods the last
// pass left unsettled (no API object to write to yet, a failed write, a
// terminal phase held back, a deletion not done): a status change in a
// burst of a hundred pods costs one pod's planning, not a hundred. Each
// pass:
//
//   - plans (plan.go, pure): which pods need a status write, a held write
//     or a deletion. A pod needs a write when its status differs from the
//     one last written to the same API object, and, on the periodic pass,
//     when writing would change the API object's current status
//     (upstream's needsReconcile). An API pod's status goes to the pod; a
//     static pod's to its mirror pod (same name, other UID), and nowhere
//     while it has none.
//   - merges (merge.go, pure): the kubelet owns phase, reason, message,
//     host and pod IPs, start time, QoS class, container statuses (with
//     their resources), the pod-level resources and allocatedResources and the
//     conditions PodScheduled, PodReadyToStartContainers, Initialized,
//     Ready, ContainersReady, AllContainersRestarting and the resize
//     conditions; DisruptionTarget is shared and sent only with the move
//     to a terminal phase. Everything
//     else (other controllers' conditions, nominatedNodeName, resource
//     claim statuses, resize status) is kept from the API object. A
//     terminal phase in the API is never moved back: such a write is held
//     and logged. A pod is not moved to a terminal phase while the pod
//     workers say it could still have running containers (an eviction
//     reports Failed before its kill completes): the API's phase, reason
//     and message stay, and the record is marked Delayed so the terminal
//     status is written once the containers are stopped (upstream's
//     mergePodStatus with PodCouldHaveRunningContainers).
//   - patches (patch.go, pure bytes): a strategic merge patch of
//     pods/status from the current API status to the merged one, carrying
//     metadata.uid as a precondition, as upstream's PatchPodStatus. Unlike
//     upstream, which reads the pod before every patch, the current API
//     status is the one berth's last write left, or the API source's view
//     before a first write (patchBase): the kubelet alone writes the fields
//     it owns, and another writer's fields are not in the patch. The pod is
//     read first on the periodic pass (which reconciles) and after a failed
//     patch (which may have been applied).
//   - deletes an API pod that has a deletion timestamp, a terminal phase in
//     the API and that the pod workers report finished (CanBeDeleted), once,
//     with grace period 0 and a UID precondition; mirror pods are never
//     deleted here (see package mirrorpod).
//
// Within a pass, each pod's operation runs at once and concurrently with
// the others' (at most 16 requests in flight, within the client's
// kubeAPIQPS and kubeAPIBurst), so a pod's new status never waits behind
// another pod's GET and PATCH; a pod's changes are batched only with its
// own (the latest status wins). The Run goroutine alone reads and
// updates the records, before and after the operations.
//
// Every write that reaches the API server is reported (Config.ObserveWrite)
// with the time since the store first held a change not yet written
// (latency.go; the store stamps its changes): upstream's pod status sync
// latency, the cache → PATCH stage of a pod's start.
//
// What the syncer remembers of a pod (what it last wrote, its pending
// change) ends with the pod: Forget, which the route by which per-pod
// state ends (internal/pod/podgone) calls, drops it at the next pass.
//
// A failed write leaves the pod unsettled, so the next pass (at the latest
// the periodic one) retries: losing the API server loses no status. The syncer never writes to the store.
package statussync
