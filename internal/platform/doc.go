// Package platform is the wing of adapters to the host and the container
// runtime, which the other wings reach through interfaces they declare:
//
//	cri            the CRI v1 client, its error classes and the in-memory
//	               fake (crifake) with its behaviour suite (critest)
//	machine        the host facts the Node reports
//	containerlogs  the runtime's CRI log files: reading, tailing, serving
//	checkpoint     checkpoint files with upstream's envelope and checksum
//	hostsetup      the kernel tunables and host files berth sets at start
//	iptables       the kubelet's iptables utility chains
//	lockfile       --lock-file
//	sdnotify       systemd's sd_notify protocol
//	tracing        the OpenTelemetry tracer provider
//	selinux        whether SELinux is on and a filesystem carries labels
//	pluginmanager  node plugins' registration (<root-dir>/plugins_registry):
//	               CSI and DRA drivers registered with their type's handler
//
// Platform packages may import podkit's pure helpers and no other wing
// (archtest.Wings holds it).
package platform
