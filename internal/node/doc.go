// Package node is the wing of the node's guards and resource managers:
//
//	cm             the cgroup hierarchy: node allocatable, QoS and pod cgroups
//	cpumanager     exclusive CPUs for Guaranteed pods (static policy)
//	memorymanager  NUMA memory for Guaranteed pods (Static policy)
//	topology       the topology manager's hints and policies
//	devicemanager  device plugins: registration, devices, allocation
//	eviction       eviction under memory, disk, inode and PID pressure
//	gc             image and container garbage collection
//	logrotate      container log rotation
//	nodeshutdown   graceful node shutdown through logind
//	userns         user namespace ID ranges for pods
//	dra            dynamic resource allocation: DRA drivers, claims prepared per pod
//
// They keep the node healthy for every pod and never import the pod path:
// what they need of a pod comes through podkit's helpers and the
// interfaces they declare. They may import podkit and platform
// (archtest.Wings holds it).
package node
