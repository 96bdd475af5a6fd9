// Package syncloop is berth's main loop: one goroutine that owns the set of
// desired pods and only dispatches. It multiplexes pod source updates, PLEG
// events, a 1 s resync tick and a housekeeping tick, and hands each pod to
// its pod worker. It performs no runtime work itself: housekeeping (which
// lists the runtime and removes what is left of gone pods) runs in a
// goroutine of its own that the housekeeping tick only wakes.
//
// The desired pods are published as an immutable snapshot (Pods) that any
// goroutine may read; so are the API source's mirror pods (MirrorPod,
// MirrorPods), which are never run: housekeeping counts them as known to
// a source.
package syncloop
