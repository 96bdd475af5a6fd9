package agent

import (
	"github.com/berthk8s/berth/internal/pod/podgone"
	"github.com/berthk8s/berth/internal/pod/podsync"
)

// registerOwners registers every owner of per-pod state with route, the
// one way that state ends (internal/pod/podgone, STYLE rule 20), once
// every component is built and before anything runs. The pod workers tell
// route of a pod that is finished and no longer desired, housekeeping of
// the orphans the Holders (statuses, allocations, user namespaces, the pod
// startup tracker, which sees mirror pods no worker runs, the DRA
// manager's claims) hold; each owner
// then forgets the pod, in this order: the syncer's record, the probes,
// the status, the Pods API's record of it (a DELETED to its watchers),
// what the status writer wrote of it, the start timeline, the allocations, the user
// namespace, the volumes, the configMap and secret references, the
// exclusive CPUs and memory, the devices, the ResourceClaims still
// prepared.
func (n *node) registerOwners(route *podgone.Route, syncer *podsync.Syncer) {
	route.Register("pod records", syncer)
	route.Register("probes", n.pods.prober)
	route.Register("statuses", n.pods.statuses)
	if n.serve.podAPIs.pods != nil { // the PodsAPI gate: DELETED to its watchers
		route.Register("pods API", n.serve.podAPIs.pods)
	}
	if n.cluster.status != nil { // cluster mode
		route.Register("status writer", n.cluster.status)
	}
	route.Register("pod startup tracker", n.metrics)
	route.Register("pod timelines", n.pods.timeline)
	route.Register("allocations", n.pods.alloc)
	route.Register("user namespaces", n.managers.userns)
	route.Register("volumes", n.vols.manager)
	if n.vols.podCerts != nil { // cluster mode
		route.Register("pod certificates", n.vols.podCerts)
	}
	route.Register("configMaps and secrets", n.vols.objects)
	route.Register("cpu manager", n.managers.cpus)
	route.Register("memory manager", n.managers.memory)
	route.Register("device manager", n.managers.devices)
	route.Register("dynamic resources", n.managers.dra)
}
