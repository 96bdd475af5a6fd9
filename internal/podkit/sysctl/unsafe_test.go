package sysctl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func TestUnsafe(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		want     Allowlist
		wantErr  string
	}{
		{name: "none", want: Allowlist{}},
		{name: "k3s's servicelb sysctls", patterns: []string{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"},
			want: Allowlist{"net.ipv4.ip_forward": utilsysctl.NetNamespace, "net.ipv6.conf.all.forwarding": utilsysctl.NetNamespace}},
		{name: "a prefix", patterns: []string{"kernel.msg*", "net.core.somaxconn"},
			want: Allowlist{"kernel.msg*": utilsysctl.IPCNamespace, "net.core.somaxconn": utilsysctl.NetNamespace}},
		{name: "not namespaced", patterns: []string{"net.core.somaxconn", "vm.swappiness"},
			wantErr: `the sysctls "vm.swappiness" are not known to be namespaced`},
		{name: "not a pattern", patterns: []string{"Kernel.MsgMax"},
			wantErr: `sysctl "Kernel.MsgMax" must have at most 253 characters and match regex ` + patternFmt},
		{name: "a star inside", patterns: []string{"kernel.*.x"},
			wantErr: `sysctl "kernel.*.x" must have at most 253 characters and match regex ` + patternFmt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unsafe(tt.patterns)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Fatalf("Unsafe(%q) error = %q, want %q", tt.patterns, gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Unsafe(%q) (-want +got):\n%s", tt.patterns, diff)
			}
		})
	}
}

func TestCheckWithUnsafe(t *testing.T) {
	unsafe, err := Unsafe([]string{"net.ipv4.ip_forward", "kernel.msg*"})
	if err != nil {
		t.Fatal(err)
	}
	allow := SafeAllowlist("6.1.0").Union(unsafe)
	tests := []struct {
		name    string
		sysctl  string
		hostNet bool
		want    string
	}{
		{name: "safe", sysctl: "net.ipv4.tcp_syncookies"},
		{name: "allowed unsafe", sysctl: "net.ipv4.ip_forward"},
		{name: "allowed unsafe, slash-separated", sysctl: "net/ipv4/ip_forward"},
		{name: "allowed by prefix", sysctl: "kernel.msgmax"},
		{name: "the prefix itself, as upstream", sysctl: "kernel.msg"},
		{name: "unsafe, not allowed", sysctl: "net.core.somaxconn", want: `forbidden sysctl: "net.core.somaxconn" not allowlisted`},
		{name: "allowed unsafe with host network", sysctl: "net.ipv4.ip_forward", hostNet: true,
			want: `forbidden sysctl: "net.ipv4.ip_forward" not allowed with host Net enabled`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: tt.hostNet, SecurityContext: &corev1.PodSecurityContext{
				Sysctls: []corev1.Sysctl{{Name: tt.sysctl, Value: "1"}},
			}}}
			got := ""
			if err := allow.Check(pod); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check(%q) = %q, want %q", tt.sysctl, got, tt.want)
			}
		})
	}
}

// TestPatternMatchesUpstream pins the pattern and its length limit to
// upstream's policy and core validation.
func TestPatternMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value("k8s.io/kubernetes/pkg/apis/policy/validation", "SysctlContainSlashPatternFmt").AsString(); got != patternFmt {
		t.Errorf("upstream's SysctlContainSlashPatternFmt is %q, berth's patternFmt %q", got, patternFmt)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/apis/core/validation", "SysctlMaxLength").AsInt(); got != maxLength {
		t.Errorf("upstream's SysctlMaxLength is %d, berth's maxLength %d", got, maxLength)
	}
}

// TestNodeAllowlist: the kernel's safe sysctls and the unsafe ones
// allowed, or Unsafe's error.
func TestNodeAllowlist(t *testing.T) {
	got, err := NodeAllowlist("4.14.0", []string{"kernel.msg*"})
	if err != nil {
		t.Fatal(err)
	}
	want := SafeAllowlist("4.14.0")
	want["kernel.msg*"] = utilsysctl.IPCNamespace
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeAllowlist (-want +got):\n%s", diff)
	}
	if _, err := NodeAllowlist("6.1.0", []string{"vm.swappiness"}); err == nil {
		t.Error("NodeAllowlist with a sysctl the kernel does not namespace: no error")
	}
}
