package kuberuntime

import (
	"strings"
	"testing"
)

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
