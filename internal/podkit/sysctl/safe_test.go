package sysctl

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	"k8s.io/utils/ptr"
)

func TestSafeAllowlist(t *testing.T) {
	anyKernel := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"}
	from45 := append(slices.Clone(anyKernel), "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes")
	from46 := append(slices.Clone(from45), "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_notsent_lowat")
	all := append(slices.Clone(from46), "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle")
	tests := []struct {
		release string
		want    []string
	}{
		{"", anyKernel},
		{"not-a-version", anyKernel},
		{"3.10.0-1160.el7.x86_64", anyKernel},
		{"4.5.0", from45},
		{"4.6", from46},
		{"4.14.999", from46},
		{"4.15.0-20-generic", all},
		{"6.1.0-18-amd64", all},
	}
	for _, tt := range tests {
		t.Run(tt.release, func(t *testing.T) {
			got := SafeAllowlist(tt.release)
			if diff := cmp.Diff(sorted(tt.want), sorted(keys(got))); diff != "" {
				t.Errorf("SafeAllowlist(%q) (-want +got):\n%s", tt.release, diff)
			}
			for name, ns := range got {
				if want := utilsysctl.IPCNamespace; name == "kernel.shm_rmid_forced" && ns != want {
					t.Errorf("%s in namespace %q, want %q", name, ns, want)
				} else if name != "kernel.shm_rmid_forced" && ns != utilsysctl.NetNamespace {
					t.Errorf("%s in namespace %q, want Net", name, ns)
				}
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name             string
		sysctls          []string
		hostNet, hostIPC bool
		hostUsers        *bool
		want             string
	}{
		{name: "none"},
		{name: "safe ones", sysctls: []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_rmem", "net.ipv4.tcp_notsent_lowat"}},
		{name: "slash-separated names are normalized", sysctls: []string{"net/ipv4/tcp_keepalive_time"}},
		{name: "unsafe", sysctls: []string{"kernel.msgmax"}, want: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "unsafe net", sysctls: []string{"net.core.somaxconn"}, want: `forbidden sysctl: "net.core.somaxconn" not allowlisted`},
		{name: "normalized in the message", sysctls: []string{"net/core/somaxconn"}, want: `forbidden sysctl: "net.core.somaxconn" not allowlisted`},
		{name: "ipc sysctl with host IPC", sysctls: []string{"kernel.shm_rmid_forced"}, hostIPC: true,
			want: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
		{name: "ipc sysctl with host network", sysctls: []string{"kernel.shm_rmid_forced"}, hostNet: true},
		{name: "net sysctl with host network", sysctls: []string{"net.ipv4.ping_group_range"}, hostNet: true,
			want: `forbidden sysctl: "net.ipv4.ping_group_range" not allowed with host Net enabled`},
		{name: "user sysctl with the host's users", sysctls: []string{"user.max_user_namespaces"},
			want: `forbidden sysctl: "user.max_user_namespaces" not allowed with host User enabled`},
		{name: "user sysctl in a user namespace", sysctls: []string{"user.max_user_namespaces"}, hostUsers: ptr.To(false)},
	}
	allow := SafeAllowlist("6.1.0")
	allow["user.max_user_namespaces"] = utilsysctl.UserNamespace // as an admin's allowlist could
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: tt.hostNet, HostIPC: tt.hostIPC, HostUsers: tt.hostUsers,
				SecurityContext: &corev1.PodSecurityContext{}}}
			for _, s := range tt.sysctls {
				pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: s, Value: "1"})
			}
			got := ""
			if err := allow.Check(pod); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
	if err := allow.Check(&corev1.Pod{}); err != nil {
		t.Errorf("Check of a pod without a security context = %v", err)
	}
}

func keys(a Allowlist) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
