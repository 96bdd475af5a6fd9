// Package agent wires berth together: it builds every wing's components
// from the loaded configuration, starts them in order and stops them in
// reverse, within a bounded stop budget and without stopping a pod
// (group.go). It decides nothing a wing can decide itself: the admit
// handlers and their order are internal/pod/admission's, which pods are
// active is internal/pod/podworker's, the configuration's checks against
// the host are internal/config's, the mirror pod sync is
// internal/cluster/mirrorpod's.
//
// agent.go holds the node, its components grouped by wing (runtimeConn,
// podPath, volumeWing, resourceManagers, guards, servers; no struct here
// has more than 12 fields, archtest holds it), assemble, which builds them
// in dependency order, and run, which starts them. The sync loop's
// desired pods (syncloop.Desired) are built first, so no reader waits for
// the loop. Two links are late-bound, each said where it is made: the
// allocation manager admits resizes through the admit handlers, which
// need the eviction manager, built after the workers; and the syncer and
// the allocation manager reach the pod workers, which are built over the
// syncer.
//
// One file a wing's builder:
//
//	cluster.go, certs.go, podcidr.go    the cluster side (API clients, node
//	                                    status, lease, status writer,
//	                                    certificates, the pod CIDR)
//	sources.go                          the pod sources
//	prober.go, allocation.go            the prober; the allocation manager
//	cgroups.go, resources.go            the container manager; containers'
//	                                    resource and memory settings
//	cpumanager.go, topology.go,         the CPU, topology and memory managers
//	memorymanager.go, userns.go         and the user namespace manager
//	eviction.go, gc.go, shutdown.go     eviction, GC and log rotation, node
//	                                    shutdown
//	pullrecords.go, credprovider.go     image pull records, credential
//	                                    providers
//	apiserver.go, streaming.go,         the kubelet API, streaming, stats
//	metrics.go                          and metrics
//	podapis.go                          the pod resources API and the Pods
//	                                    API, and the views of the pods and
//	                                    managers they read
//	declaredfeatures.go                 the node's declared features
//	plugins.go, csi.go                  the plugin manager over
//	                                    <root-dir>/plugins_registry, the
//	                                    CSI drivers' handler and the
//	                                    CSINode's initialization
//	dra.go                              the DRA manager (DRA drivers, pods'
//	                                    ResourceClaims)
//	podcert.go                          the podCertificate projections'
//	                                    keys and requests (cluster mode)
//	forget.go                           the owners of per-pod state,
//	                                    registered with internal/pod/podgone
//	simulated.go                        RunSimulated: a simulated node
//	                                    (berth simulate), handed what a
//	                                    real node reads of its host
//	systemd.go, process.go, tracing.go, the process's edges: systemd
//	iptables.go                         readiness and watchdog, its own
//	                                    tuning, tracing, iptables chains
package agent
