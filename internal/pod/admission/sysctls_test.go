package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// TestSysctls: upstream's sysctl admission over a 6.1 kernel's safe
// sysctls plus allowedUnsafeSysctls kernel.msg*, net.core.somaxconn and
// kernel.shmmax.
func TestSysctls(t *testing.T) {
	unsafe, err := sysctl.Unsafe([]string{"kernel.msg*", "net.core.somaxconn", "kernel.shmmax"})
	if err != nil {
		t.Fatal(err)
	}
	allow := sysctl.SafeAllowlist("6.1.0").Union(unsafe)
	forbidden := func(msg string) Result { return Result{Reason: "SysctlForbidden", Message: msg} }
	tests := []struct {
		name    string
		sysctls []string
		mutate  func(p *corev1.Pod)
		want    Result
	}{
		{name: "no security context", want: admitted},
		{name: "no sysctls", sysctls: []string{}, want: admitted},
		{name: "safe", sysctls: []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range"}, want: admitted},
		{name: "safe, slash-separated", sysctls: []string{"net/ipv4/tcp_syncookies"}, want: admitted},
		{name: "safe on a newer kernel only", sysctls: []string{"net.ipv4.tcp_rmem"}, want: admitted},
		{name: "unsafe, not listed", sysctls: []string{"kernel.shm_rmid_forced", "kernel.sem"},
			want: forbidden(`forbidden sysctl: "kernel.sem" not allowlisted`)},
		{name: "unsafe, not listed, slash-separated name reported normalized", sysctls: []string{"net/ipv4/ip_forward"},
			want: forbidden(`forbidden sysctl: "net.ipv4.ip_forward" not allowlisted`)},
		{name: "unsafe, listed", sysctls: []string{"net.core.somaxconn", "kernel.shmmax"}, want: admitted},
		{name: "unsafe, listed by a prefix", sysctls: []string{"kernel.msgmax", "kernel.msgmnb"}, want: admitted},
		{name: "a prefix allows only what it starts", sysctls: []string{"kernel.shmall"},
			want: forbidden(`forbidden sysctl: "kernel.shmall" not allowlisted`)},
		{name: "net sysctl with hostNetwork", sysctls: []string{"net.core.somaxconn"},
			mutate: func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			want:   forbidden(`forbidden sysctl: "net.core.somaxconn" not allowed with host Net enabled`)},
		{name: "safe net sysctl with hostNetwork", sysctls: []string{"net.ipv4.ping_group_range"},
			mutate: func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			want:   forbidden(`forbidden sysctl: "net.ipv4.ping_group_range" not allowed with host Net enabled`)},
		{name: "ipc sysctl by prefix with hostIPC", sysctls: []string{"kernel.msgmax"},
			mutate: func(p *corev1.Pod) { p.Spec.HostIPC = true },
			want:   forbidden(`forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled`)},
		{name: "ipc sysctl with hostNetwork only", sysctls: []string{"kernel.shmmax"},
			mutate: func(p *corev1.Pod) { p.Spec.HostNetwork = true }, want: admitted},
		{name: "net sysctl with hostIPC only", sysctls: []string{"net.core.somaxconn"},
			mutate: func(p *corev1.Pod) { p.Spec.HostIPC = true }, want: admitted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("p")
			if tt.sysctls != nil {
				pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
				for _, name := range tt.sysctls {
					pod.Spec.SecurityContext.Sysctls = append(pod.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: name, Value: "1"})
				}
			}
			if tt.mutate != nil {
				tt.mutate(pod)
			}
			if diff := cmp.Diff(tt.want, Sysctls(pod, allow)); diff != "" {
				t.Errorf("Sysctls (-want +got):\n%s", diff)
			}
		})
	}
}
