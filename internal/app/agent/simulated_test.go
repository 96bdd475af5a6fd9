package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/sim/simdriver"
)

// simulatedConfig is standalone's configuration made a simulated node's.
func simulatedConfig(t *testing.T, fake *crifake.Fake) *config.Config {
	t.Helper()
	cfg, _, _ := standalone(t, fake)
	cfg.Kubeconfig = "simulated"
	cfg.Kubelet.StaticPodPath = ""
	cfg.Kubelet.ReadOnlyPort = 0
	return cfg
}

// TestAssembleSimulated: a simulated node is the real node's assemble
// with its host's facts handed in: no certificate client of its own (the
// shared rest config's credentials), its machine as given, and run skips
// the host-only components alone.
func TestAssembleSimulated(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fake := crifake.New(clock.RealClock{})
	cfg := simulatedConfig(t, fake)
	if err := checkSimulated(cfg); err != nil {
		t.Fatalf("checkSimulated: %v", err)
	}
	probes := func(context.Context, prober.ProbeType, *corev1.Pod, *corev1.Container, string) (bool, string, error) {
		return true, "", nil
	}
	sim := &Simulated{
		Runtime: fake.Client(t), Machine: machine.Info{NumCPU: 3, MemoryBytes: 5 << 30, CgroupV2: true},
		IPs: []string{"10.64.0.1"}, API: &rest.Config{Host: "https://127.0.0.1:1"}, Probes: probes, Mounter: &simdriver.Mounter{},
	}
	n, err := assemble(ctx, cfg, "test", clock.RealClock{}, sim)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	defer n.close()
	if n.cluster.certs != nil {
		t.Error("a simulated node made a certificate client of its own")
	}
	var runs []string
	for name := range n.cluster.runs() {
		runs = append(runs, name)
	}
	slices.Sort(runs)
	if want := []string{"node-lease", "node-status", "node-synced", "pod-status"}; !slices.Equal(runs, want) {
		t.Errorf("cluster runs %v; want %v", runs, want)
	}
	if g := n.newGroup(ctx); g.skip == nil || !g.skip("device-manager") || !g.skip("eviction") || g.skip("sync-loop") {
		t.Error("a simulated node's group does not skip the host-only components alone")
	}
	// Handed the model's summary, the node evicts on it.
	modelSummary := func(context.Context, bool) (*statsapi.Summary, error) {
		return &statsapi.Summary{Node: statsapi.NodeStats{NodeName: "model"}}, nil
	}
	sim.Summary = modelSummary
	if g := n.newGroup(ctx); g.skip("eviction") || !g.skip("stats") {
		t.Error("a simulated node handed a Summary does not run eviction, or runs the stats provider")
	}
	if s, err := n.summary()(ctx, true); err != nil || s.Node.NodeName != "model" {
		t.Errorf("the eviction manager's summary = %v, %v; want the model's", s, err)
	}
	if ips, host, err := n.hostFacts(); err != nil || host.NumCPU != 3 || !slices.Equal(ips, sim.IPs) {
		t.Errorf("hostFacts = %v, %+v, %v; want the simulated ones", ips, host, err)
	}
	if n.probeHandler() == nil || n.mounter() != sim.Mounter {
		t.Error("the prober's handler or the volume manager's mounter is not the simulated one")
	}
}

func TestHostOnly(t *testing.T) {
	for _, name := range []string{"device-manager", "plugin-manager", "pod-resources", "pods-api", "systemd", "iptables", "stats", "eviction", "image-gc", "log-rotation"} {
		if !hostOnly(name) {
			t.Errorf("%s runs on a simulated node", name)
		}
	}
	for _, name := range []string{"sync-loop", "pleg", "prober", "pod-sources", "node-status", "node-lease", "pod-status", "volumes", "csinode", "container-gc", "runtime-health"} {
		if hostOnly(name) {
			t.Errorf("%s does not run on a simulated node", name)
		}
	}
}

func TestCheckSimulated(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"no kubeconfig", func(c *config.Config) { c.Kubeconfig = "" }, "joins a cluster"},
		{"cgroupsPerQOS", func(c *config.Config) { c.Kubelet.CgroupsPerQOS = ptr.To(true) }, "no cgroups"},
		{"server", func(c *config.Config) { c.Kubelet.EnableServer = ptr.To(true) }, "no port"},
		{"read-only port", func(c *config.Config) { c.Kubelet.ReadOnlyPort = 10255 }, "no port"},
		{"healthz", func(c *config.Config) { c.Kubelet.HealthzPort = ptr.To[int32](10248) }, "no port"},
		{"iptables", func(c *config.Config) { c.Kubelet.MakeIPTablesUtilChains = ptr.To(true) }, "iptables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := simulatedConfig(t, crifake.New(clock.RealClock{}))
			tt.mutate(cfg)
			if err := checkSimulated(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkSimulated = %v; want an error with %q", err, tt.want)
			}
		})
	}
}
