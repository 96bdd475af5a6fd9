// Package csi is the node side of CSI: the registry of the drivers
// registered on the node (upstream's pkg/volume/csi DriversStore), and a
// client of a driver's node service for the volume code.
//
//	drivers.go     Drivers, Driver: the registry, by driver name
//	versions.go    which advertised CSI version a driver is spoken to in,
//	               and upstream's refusals. Pure
//	nodeclient.go  Timeout, Dial, NodeClient: a driver's node service
//
// The fake driver of the tests is csifake.
package csi
