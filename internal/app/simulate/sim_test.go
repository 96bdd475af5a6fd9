package simulate

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
)

func testConfig(t *testing.T) Config {
	return Config{
		API: &rest.Config{Host: "https://127.0.0.1:1"}, Kubeconfig: "kc", Nodes: 2, Prefix: "sim-",
		Node: NodeTemplate{
			Capacity: Capacity{CPU: 4, Memory: 8 << 30, EphemeralStorage: 1 << 30, Pods: 30},
			Labels:   map[string]string{"a": "b"}, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}},
		},
		RootDir: t.TempDir(), Clock: clock.RealClock{}, Version: "test",
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no API", func(c *Config) { c.API = nil }, "API and Kubeconfig"},
		{"no root", func(c *Config) { c.RootDir = "" }, "RootDir and Clock"},
		{"negative nodes", func(c *Config) { c.Nodes = -1 }, "-1 nodes"},
		{"no memory", func(c *Config) { c.Node.Capacity.Memory = 0 }, "capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			tt.mutate(&cfg)
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v; want an error with %q", err, tt.want)
			}
		})
	}
	if _, err := New(testConfig(t)); err != nil {
		t.Errorf("New of a valid config: %v", err)
	}
}

// TestNodeConfig: each node gets its own directories, the Sim's labels,
// taints and capacity, and distinct addresses; the host stays alone.
func TestNodeConfig(t *testing.T) {
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.nodeConfig(s.Name(1))
	kc := &cfg.Kubelet
	switch {
	case cfg.NodeName != "sim-1" || cfg.RootDir != filepath.Join(s.cfg.RootDir, "sim-1", "root"):
		t.Errorf("node %q root %q", cfg.NodeName, cfg.RootDir)
	case cfg.NodeLabels["a"] != "b" || len(cfg.RegisterWithTaints) != 1 || kc.MaxPods != 30:
		t.Errorf("labels %v taints %v maxPods %d", cfg.NodeLabels, cfg.RegisterWithTaints, kc.MaxPods)
	case *kc.CgroupsPerQOS || *kc.EnableServer || kc.ReadOnlyPort != 0 || *kc.HealthzPort != 0 || *kc.MakeIPTablesUtilChains:
		t.Error("a simulated node's configuration touches the host")
	case cfg.Kubeconfig != "kc":
		t.Errorf("kubeconfig %q", cfg.Kubeconfig)
	}
	if m := s.machineInfo(1); m.NumCPU != 4 || m.MemoryBytes != 8<<30 || m.RootFSBytes != 1<<30 || m.MachineID == s.machineInfo(0).MachineID {
		t.Errorf("machine %+v", m)
	}
	seen := map[string]bool{}
	for _, i := range []int{0, 1, 254, 255, 256, 65535, 65536} {
		ip := nodeIP(i)
		if seen[ip] {
			t.Errorf("node %d address %s repeats", i, ip)
		}
		seen[ip] = true
	}
}
