// Package csi is the node side of CSI: the plugin manager's handler of
// CSI drivers (upstream's pkg/volume/csi RegistrationHandler and
// pkg/volume/csi/nodeinfomanager), the registry of the drivers registered
// on the node, and a client of a driver's node service for the volume
// code.
//
//	handler.go     Config, New, Handler: ValidatePlugin, RegisterPlugin,
//	               DeRegisterPlugin (pluginmanager.Handler)
//	startup.go     InitializeCSINode, InitError: the CSINode at start
//	drivers.go     Drivers, Driver: the registry, by driver name
//	versions.go    which advertised CSI version a driver is spoken to in,
//	               and upstream's refusals. Pure
//	nodeinfo.go    what a driver changes in the Node (AnnotationNodeID,
//	               topology labels) and the CSINode (its entry, the
//	               migrated plugins annotation, the owner). Pure
//	nodeapi.go     the reads and writes of the Node and the CSINode,
//	               serialized and retried
//	backoff.go     upstream's back-offs; retry on an injected clock
//	nodeclient.go  Timeout, Dial, NodeClient: a driver's node service
//
// A driver's registration, as upstream's: its versions must include a
// CSI 1.x one, higher than that of a driver of the same name already
// registered; it enters Drivers; NodeGetInfo says its node ID, volume
// limit and topology; the Node gets the node ID in its
// csi.volume.kubernetes.io/nodeid annotation and the topology segments as
// labels (patched through the status subresource; a label the Node has
// with another value fails the registration), and the CSINode gets the
// driver's entry (created, owned by the Node, when missing). A failure
// anywhere unregisters the driver again. Deregistration removes the entry
// and the annotation's key; the labels stay. At start InitializeCSINode
// creates the CSINode, or adopts it, with the in-tree plugins berth
// migrates in its storage.alpha.kubernetes.io/migrated-plugins
// annotation; a CSINode owned by an earlier Node of the same name is
// deleted and made again.
//
// The fake driver of the tests is csifake.
package csi
