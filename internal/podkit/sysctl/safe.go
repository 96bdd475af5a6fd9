package sysctl

import (
	"k8s.io/apimachinery/pkg/util/version"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// safe is one of upstream's safe sysctls: namespaced, and isolated from
// other pods. Kernel is the first kernel release that namespaces it, ""
// for every kernel.
type safe struct {
	Name, Kernel string
}

// safeSysctls is upstream's table (pkg/kubelet/sysctl/safe_sysctls.go, with
// the releases of pkg/util/kernel), in its order. TestSafeMatchesUpstream
// compares them.
var safeSysctls = []safe{
	{Name: "kernel.shm_rmid_forced"},
	{Name: "net.ipv4.ip_local_port_range"},
	{Name: "net.ipv4.tcp_syncookies"},
	{Name: "net.ipv4.ping_group_range"},
	{Name: "net.ipv4.ip_unprivileged_port_start"},
	{Name: "net.ipv4.ip_local_reserved_ports", Kernel: "3.16"},
	{Name: "net.ipv4.tcp_keepalive_time", Kernel: "4.5"},
	{Name: "net.ipv4.tcp_fin_timeout", Kernel: "4.6"},
	{Name: "net.ipv4.tcp_keepalive_intvl", Kernel: "4.5"},
	{Name: "net.ipv4.tcp_keepalive_probes", Kernel: "4.5"},
	{Name: "net.ipv4.tcp_rmem", Kernel: "4.15"},
	{Name: "net.ipv4.tcp_wmem", Kernel: "4.15"},
	{Name: "net.ipv4.tcp_slow_start_after_idle", Kernel: "4.15"},
	{Name: "net.ipv4.tcp_notsent_lowat", Kernel: "4.6"},
}

// Allowlist maps each sysctl a pod may set to the kernel namespace it lives
// in; a key ending in "*" allows every sysctl with that prefix (Unsafe). It
// is a plain value, read-only once built.
type Allowlist map[string]utilsysctl.Namespace

// SafeAllowlist returns the safe sysctls that a kernel of the given release
// (uname -r: "6.1.0-18-amd64") namespaces. As upstream, a release that does
// not parse as a version keeps only the sysctls every kernel namespaces.
func SafeAllowlist(kernelRelease string) Allowlist {
	kernel, err := version.ParseGeneric(kernelRelease)
	if err != nil {
		kernel = nil
	}
	out := Allowlist{}
	for _, s := range safeSysctls {
		if s.Kernel != "" && (kernel == nil || !kernel.AtLeast(version.MustParseGeneric(s.Kernel))) {
			continue
		}
		ns, _, _ := utilsysctl.GetNamespace(s.Name)
		out[s.Name] = ns
	}
	return out
}
