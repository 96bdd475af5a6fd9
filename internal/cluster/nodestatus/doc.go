// Package nodestatus owns berth's Node object and its Lease: what makes
// `kubectl get nodes` show a Ready node with the right capacity, addresses
// and info.
//
//   - inputs.go: Inputs, the snapshot every status is computed from
//     (machine facts, runtime state, configuration, now).
//   - sample.go: Sampler, which takes that snapshot: machine facts read
//     once at start, the runtime's latest health verdict (cri.Health) and
//     its images.
//   - setters.go, allocatable.go, conditions.go: pure setters, one per
//     concern, run in upstream's order by Apply: addresses (left to the
//     cloud controller manager with --cloud-provider=external, which gets
//     --node-ip in the provided-node-ip annotation), machine info
//     with capacity and allocatable (capacity - kubeReserved -
//     systemReserved - hard eviction thresholds, floored at 0), versions,
//     daemon endpoints, images, runtime handlers, the MemoryPressure,
//     DiskPressure, PIDPressure and Ready conditions with upstream's
//     reasons, messages, transition times and events, and last the
//     declared features (status.declaredFeatures, decided once at start
//     by internal/pod/declaredfeatures).
//   - initial.go: InitialNode (the Node berth registers, with
//     spec.providerID and, with an external cloud provider, the
//     uninitialized taint), the
//     reconciliation of a Node that already exists, and StatusChanged
//     (equality that ignores heartbeats).
//   - patch.go: StatusPatch, the strategic merge patch for the status
//     subresource.
//   - controller.go: Controller, one goroutine that registers the Node
//     (100 ms doubling to 7 s between attempts), then every
//     nodeStatusUpdateFrequency computes the status and patches it when it
//     changed or nodeStatusReportFrequency has passed, re-registering a
//     Node deleted under it. Kick asks for an update at once (say, when
//     the runtime's readiness changed). The events a change calls for
//     (NodeHasSufficientMemory, NodeReady, NodeNotReady, Rebooted, ...)
//     are recorded once the change is stored. It publishes the latest
//     Node (Node()) for readers such as admission.
//   - lease.go: Lease, one goroutine that keeps kube-node-lease/<node>
//     renewed every quarter of nodeLeaseDurationSeconds.
//
// The setters, InitialNode, StatusChanged and StatusPatch are pure: they
// take the time in Inputs and import no client, gRPC or HTTP package (a
// test holds that line); only controller.go and lease.go talk to the API.
//
// Differences from upstream, on purpose: berth reads the Node through a
// GET served from the API server's cache (resourceVersion "0") rather than
// an informer; stale huge page sizes are dropped from capacity at every
// update, not only at registration; the Node is registered again when it
// is deleted under berth; the lease is created as soon as the Node's UID
// is known (with backoff) rather than at the next renew interval; renewals
// have no jitter.
package nodestatus
