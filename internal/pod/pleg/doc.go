// Package pleg is berth's pod lifecycle event generator.
//
// It owns these things:
//
//   - Diff (diff.go): a pure function that compares two runtime listings and
//     returns one Event per container (or sandbox) state transition, using
//     the upstream kubelet's transition table.
//   - Cache (cache.go): the pod status cache. The relister writes the full
//     runtime status of every pod that changed; pod workers block in
//     GetNewerThan until the cache is fresher than their last sync.
//   - PLEG (pleg.go): the relist owner goroutine. Every Period it lists the
//     runtime, diffs against the previous listing, inspects the pods that
//     changed, updates the Cache, bumps the Cache's global timestamp and
//     then publishes the events on a buffered channel for the sync loop.
//   - RelistPod (relistpod.go): the on-demand relist of one pod, which the
//     pod workers ask for after each sync (upstream's PLEGOnDemandRelist):
//     the same diff, inspection and events for that pod alone, right
//     away; the periodic relist stays the safety net. It never moves the
//     global timestamp; an unchanged pod's entry is marked observed at the
//     time its listing began (Cache.SetObserved).
//   - The container event stream (evented.go): when the runtime has the
//     CRI GetContainerEvents stream (containerd >= 1.7 and 2.x), Run
//     follows it through an EventSource and relists the event's pod at
//     once (RelistPod), so a container that starts or exits on its own is
//     in the cache and the events within milliseconds, not at the next
//     relist. An event older than the pod's cached status (its created_at
//     before the time that status was read, or before the last full
//     relist) is skipped: the cache's "newer than" contract orders events
//     against relists. A failed stream is reopened after DefaultEventRetry,
//     doubled up to two minutes while attempts deliver nothing; a runtime
//     without the stream (containerd 1.6: Unimplemented) gets one info
//     line and no retries.
//
// Decisions about the event stream, against upstream v1.37:
//
//   - An event relists its pod; it is not written into the cache as it
//     stands. Upstream v1.37's EventedPLEG made the same choice (its
//     evented.go only requests a relist of the pod, and only for
//     CONTAINER_STOPPED; the older design that wrote the events' statuses
//     into the cache was dropped): the status of a pod then has one source,
//     the runtime's PodStatus through the same conversion (one decision,
//     one place), a stale event can never overwrite a fresher status, and
//     the cost is one list and one inspection of one pod. berth relists on
//     every event type, not only on stops, to report starts as soon.
//   - The periodic relist keeps upstream's period and threshold (1 s, 3
//     min) whether or not events flow, as upstream v1.37 does (its
//     pkg/kubelet/pleg/generic.go no longer lengthens them under EventedPLEG): a stream
//     that fails, or misses an event, costs at most one period. berth's
//     own --pleg-relist-period may lengthen the period (tests use it to
//     show that events alone move a status).
//   - Upstream gates the stream behind EventedPLEG (alpha, off by
//     default). berth follows the stream unless the user sets
//     EventedPLEG=false (config.ContainerEvents): with the relist
//     unchanged, events change nothing a user sees but how soon a status
//     is reported, and berth is meant to be faster. An explicit
//     EventedPLEG=false is honoured (relisting only); an explicit true is
//     berth's default. Where upstream gives up after five failed attempts,
//     berth reconnects with a bounded back-off, since the relist covers
//     the gaps.
//
// The PLEG assumes a container is not created, finished and removed within
// one relist period; the periodic resync of every pod is the safety net for
// transitions it misses, as in the upstream kubelet.
package pleg
