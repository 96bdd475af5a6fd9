// Package volumes is the wing of what a pod mounts:
//
//	volume        the volume manager: desired against actual, one plugin per
//	              volume type
//	atomicwriter  the atomic writer of configMap, secret, downwardAPI and
//	              projected volumes
//	subpath       subPath mounts, opened without following a pod's links
//	objectcache   the configMaps and secrets volumes and the environment are
//	              made of
//	podcert       the keys, PodCertificateRequests and certificates of
//	              projected podCertificate sources, and their refresh
//	transient     which failures clear on their own, and how they are retried
//	csi           the node side of CSI: the plugin manager's handler of CSI
//	              drivers (the CSINode, the Node's annotation and labels),
//	              the registry of drivers, a driver's node service client,
//	              the Mounter that stages, publishes, expands and tears
//	              down CSI volumes
//
// It may import podkit and platform (archtest.Wings holds it).
package volumes
