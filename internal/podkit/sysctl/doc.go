// Package sysctl decides which sysctls a pod may set, and which default
// ones it gets, as upstream's kubelet does:
//
//	safe.go   upstream's safe sysctls with the kernel release that first
//	          namespaces each, and SafeAllowlist, the ones a node's kernel
//	          namespaces (pinned to upstream's table by a test)
//	unsafe.go Unsafe, the allowlist of allowedUnsafeSysctls (names and
//	          prefixes ending in "*", namespaced ones only), checked as
//	          upstream's NewAllowlist checks it; NodeAllowlist, the safe
//	          ones of a kernel and the unsafe ones allowed: what a node's
//	          pods may set
//	check.go  Allowlist.Check, upstream's sysctl admission (run by
//	          admission.Sysctls, the one place that decides): a sysctl outside
//	          the allowlist, or one whose namespace the pod shares with the
//	          host, is refused with upstream's message
//	defaults.go Defaults, the kubelet's defaultPodSysctls checked as
//	          upstream's validation checks them, and Defaults.ForPod, those
//	          a pod gets (upstream applyPodSysctls)
//
// Names are normalized and namespaces found by
// k8s.io/component-helpers/node/util/sysctl, as upstream does. The package
// is pure: the caller reads the kernel release.
package sysctl
