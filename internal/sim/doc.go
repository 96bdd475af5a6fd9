// Package sim is the wing of berth simulate (issue 28): what makes a
// simulated node's pods behave like applications, so that the real pod
// path running on the in-memory CRI has something to decide on.
//
//	appmodel   pure: a container's behaviour (readiness, liveness,
//	           exit, memory over time) from its pod's sim.berth.dev/
//	           annotations, and what it does at a given age
//	simdriver  performs the model on a node's crifake: exits containers,
//	           sets their memory use, answers the prober; and the
//	           node's volume mounter, which bookkeeps and mounts nothing
//	podfeed    one pod watch for every simulated node (--pod-watch
//	           shared), fanned out to their API pod sources by node
//
// It may import podkit, platform (the fake CRI) and pod (the prober's
// handler type, the pod source's Feed); only the wiring (internal/app/simulate) imports it.
package sim
