// Package pod is the wing of the pod path, in the order an update travels
// it:
//
//	podsource        file, URL and API sources merged into updates
//	syncloop         the one loop that dispatches updates, PLEG events, ticks
//	podworker        one goroutine per pod UID and its lifecycle
//	podsync          the worker's Syncer: one snapshot, one plan, applied
//	podplan          the pure planner: Compute(Inputs) Actions
//	containerconfig  the pure builders of CRI sandbox and container configs
//	kuberuntime      the plan applied through the CRI
//	podstatus        the pure status generator and the status store
//	prober           liveness, readiness and startup probes
//	pleg             the relist, its pure diff and the pod status cache
//	admission        whether the node may run a pod
//	declaredfeatures the node's declared features and their admission check
//	allocation       what each pod is allocated and actuated (resize)
//	housekeeping     cleanup after pods no source wants
//	podgone          the one route by which per-pod state ends (Gone)
//	timeline         each pod's start stages, for the kubelet API's timeline
//
// It may import podkit, platform, images, node and volumes
// (archtest.Wings holds it); the cluster side and the servers import it,
// never the other way round.
package pod
