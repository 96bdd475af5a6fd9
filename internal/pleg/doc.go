// Package pleg is berth's pod lifecycle event generator.
//
// It owns three things:
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
//
// The PLEG assumes a container is not created, finished and removed within
// one relist period; the periodic resync of every pod is the safety net for
// transitions it misses, as in the upstream kubelet.
package pleg
