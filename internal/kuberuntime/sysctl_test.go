package kuberuntime

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAllowedUnsafeSysctls: a pod that sets an unsafe sysctl gets no
// container unless the kubelet's allowedUnsafeSysctls allows it (k3s
// allows net.ipv4.ip_forward for its service load balancer).
func TestAllowedUnsafeSysctls(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		wantErr string
	}{
		{name: "not allowed", wantErr: `forbidden sysctl: "net.ipv4.ip_forward" not allowlisted`},
		{name: "allowed by name", allowed: []string{"net.ipv4.ip_forward"}},
		{name: "allowed by prefix", allowed: []string{"net.ipv4.ip_*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.UnsafeSysctls = tt.allowed })
			e.fake.AddImage("busybox:1.36")
			pod := basePod()
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_forward", Value: "1"}}}
			failures := e.sync(pod)
			got := ""
			for _, f := range failures {
				got += f.Message
			}
			if tt.wantErr == "" && len(failures) != 0 || !strings.Contains(got, tt.wantErr) {
				t.Fatalf("failures = %+v, want one saying %q", failures, tt.wantErr)
			}
		})
	}
}

func TestNewRefusesUnsafeSysctlsUpstreamRefuses(t *testing.T) {
	e := newEnv(t)
	cfg := e.m.cfg
	cfg.UnsafeSysctls = []string{"vm.swappiness"}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), `"vm.swappiness" are not known to be namespaced`) {
		t.Errorf("New with a sysctl the kernel does not namespace = %v", err)
	}
}

func TestNewDefaultPodSysctls(t *testing.T) {
	e := newEnv(t)
	cfg := e.m.cfg
	cfg.DefaultPodSysctls = map[string]string{"vm.swappiness": "1"}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), `"vm.swappiness" is not known to be namespaced for defaultPodSysctls`) {
		t.Errorf("New with a default sysctl the kernel does not namespace = %v", err)
	}
	cfg.DefaultPodSysctls = map[string]string{"net/ipv4/ip_forward": "1"}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.node.DefaultSysctls["net.ipv4.ip_forward"]; got != "1" {
		t.Errorf("node default sysctls = %v, want net.ipv4.ip_forward=1", m.node.DefaultSysctls)
	}
}
