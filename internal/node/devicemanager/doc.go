// Package devicemanager is the device manager (upstream's
// pkg/kubelet/cm/devicemanager): device plugins register on the
// Registration service at <Dir>/kubelet.sock
// (/var/lib/kubelet/device-plugins), stream their devices and health
// (ListAndWatch), and give containers the devices they ask for as
// extended resources (Allocate), which the node advertises in its
// capacity and allocatable.
//
// Lifecycle of a resource (as upstream): a plugin registers (API version
// v1beta1, an extended resource name) -> its devices stream in (capacity:
// all, allocatable: the healthy ones) -> its stream ends or its socket
// goes: every device turns unhealthy (allocatable 0, capacity kept) for
// endpointStopGracePeriod (5 min), after which the resource is reported at
// capacity 0 and forgotten. A second registration of the resource (another
// socket) takes over; one on the socket still connected is refused.
//
// Allocation happens at admission, in the topology manager's step (the
// Manager is its first hint provider; Admit stands in with policy none):
// each container, init containers first, gets its devices, reusing those
// of the pod's earlier (non-restartable) init containers, from the free
// healthy devices (the plugin's preferred allocation when it offers one);
// devices of pods no longer active are freed first. The plugin's Allocate
// response is kept per container and becomes the CRI container config's
// environment, mounts, device nodes, annotations and CDI devices
// (ContainerOptions, which also calls PreStartContainer when the plugin
// asks for it). Every assignment is checkpointed
// (<Dir>/kubelet_internal_checkpoint, package checkpoint) and restored at
// start, so a restart of berth keeps them; pods end through Forget.
//
//	manager.go       Config, Manager, capacity, Forget, device health and its
//	                 Updates, the pod resources views, admission's allocatable
//	registration.go  the Registration service, stale socket cleanup, validation
//	endpoint.go      one plugin's connection: options, ListAndWatch, RPCs
//	allocate.go      admission's allocation per container, device reuse
//	select.go        which devices a container gets (preferred, aligned)
//	poddevices.go    the per-container assignments and their checkpoint form
//	runoptions.go    the Allocate responses as CRI container options
//	hints.go         the topology manager's hints from the devices' NUMA nodes
//	messages.go      upstream's error texts
//
// Concurrency: one mutex in Manager guards all state; plugin RPCs are made
// without it.
package devicemanager
