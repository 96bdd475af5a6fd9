// Package dra is the node side of dynamic resource allocation (upstream's
// pkg/kubelet/cm/dra): the DRA drivers' kubelet plugins register through
// the plugin manager, the ResourceClaims of a pod are prepared with their
// drivers before its sandbox is created and unprepared once its
// containers have stopped, and each container gets the CDI devices of the
// claims its resources.claims name. The claim the scheduler allocated for
// a pod's DRA-backed extended resources (DRAExtendedResource,
// status.extendedResourceClaimStatus) is prepared with the others, and a
// container gets the devices of the requests its extended resources map
// to.
//
//	manager.go    Config, New, Manager: the claim cache, Run (the wipes),
//	              HeldPods and Forget (the route by which per-pod state ends)
//	prepare.go    Prepare: read, check, reference, NodePrepareResources per driver
//	unprepare.go  Unprepare: release, NodeUnprepareResources per driver
//	resources.go  CDIDevices (the CRI container config's, the extended
//	              resource claim's requests included) and GetDynamicResources
//	              (the pod resources API's claims, drivers, pools, devices, CDI IDs)
//	claims.go     a pod's claim names (resourceclaim.Name), the extended
//	              resource claim (claimsToPrepare), the checks that a
//	              claim is the pod's and reserved for it, a new claim's state
//	state.go      ClaimState and the checkpoint dra_manager_state, upstream's format
//	drivers.go    Drivers: the plugin manager's Handler of DRA drivers, the
//	              registered endpoints and the away timers
//	plugin.go     the choice of gRPC service (v1 over v1beta1) and the calls
//	watch.go      connWatch: a driver's connections up and down (a driver is
//	              away when none is up)
//	wipe.go       deleting the node's ResourceSlices of a driver that stays away
//	health.go     the drivers' device health (upstream's healthInfoCache) and
//	              its checkpoint dra_health_state
//	healthstream.go  a driver's NodeWatchResources stream (dra-health v1, or
//	              v1alpha1), reopened 5 s after it ends; Updates, the pods
//	              whose devices' health changed
//	healthstatus.go  ClaimHealth: a container's allocatedResourcesStatus
//	              entries of its claims ("claim:<name>[/<request>]")
//
// Pods reach it through the interfaces the pod path declares
// (internal/pod/podsync's Claims and ClaimHealth, internal/pod/kuberuntime's
// CDI devices):
// this package never imports the pod path.
package dra
