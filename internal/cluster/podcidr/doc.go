// Package podcidr tells the container runtime the node's pod CIDR, as
// upstream's kubelet does (updatePodCIDR): the CRI UpdateRuntimeConfig call
// with NetworkConfig.PodCidr, made once per change. berth calls it at start
// with the podCIDR setting (--pod-cidr) and, in cluster mode, with the
// Node's spec.podCIDRs whenever the node status loop reads them.
//
//	podcidr.go Updater: the last CIDR the runtime took, and Update
package podcidr
