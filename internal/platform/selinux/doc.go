// Package selinux answers the two questions about the host's SELinux that
// decide how a pod's volumes reach its containers:
//
//	host.go  Enabled: whether SELinux is on (a selinuxfs is mounted and
//	         berth runs with a label, not "kernel": go-selinux's test,
//	         which upstream's kubelet and containerd use); Supports:
//	         whether the filesystem a path is on carries SELinux labels
//	         ("seclabel" in its mount or super options, upstream's
//	         hostutil.GetSELinux)
//
// Both read /proc once per call, through a Host whose paths tests point
// at files of their own; the decisions on what they read are pure.
// Where SELinux is off, no volume is labelled and the runtime's relabel
// is a no-op, as upstream.
package selinux
