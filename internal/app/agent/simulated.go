package agent

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/node/eviction"
	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// Simulated is what a simulated node (berth simulate,
// internal/app/simulate) is handed in place of what a real node finds on
// its host. Everything else is the real node's: the same assemble builds
// the same components from the configuration, and run starts them, but
// for the host-only ones (hostOnly).
//
// The node owns Runtime once RunSimulated is called and closes it; API is
// shared by every simulated node of the process and never changed.
type Simulated struct {
	// Runtime is the node's CRI client, connected (an in-process
	// crifake).
	Runtime *cri.Client
	// Machine stands in for the host's machine facts: the capacity the
	// Node reports and admission counts against.
	Machine machine.Info
	// IPs are the node's addresses.
	IPs []string
	// API is the rest config the node's API clients start from (server
	// and credentials), in place of a certificate client of its own; one
	// for every simulated node, so they share its transport.
	API *rest.Config
	// Probes answers the node's probes (prober.Config.Handler); nil runs
	// the real handlers.
	Probes prober.Handler
	// Mounter is the volume manager's mounter; it bookkeeps and mounts
	// nothing.
	Mounter volume.Mounter
	// Pods, when set, gives the node's API pods from one watch shared by
	// every simulated node (internal/sim/podfeed); nil: a list and watch
	// of its own, as a real node.
	Pods podsource.Feed
	// Summary, when set, is the stats summary the node's eviction manager
	// decides on (the application model's figures), and the eviction
	// manager runs; nil leaves eviction off.
	Summary eviction.SummaryFunc
}

// RunSimulated runs a simulated node from cfg until ctx ends: Run, with
// sim in place of the host. cfg must join a cluster (cfg.Kubeconfig set;
// only its presence is read) and leave the host alone: no cgroupsPerQOS,
// no servers, no iptables (checkSimulated).
func RunSimulated(ctx context.Context, cfg *config.Config, version string, clk clock.WithTicker, sim Simulated) error {
	if sim.Runtime == nil || sim.API == nil || sim.Mounter == nil {
		return errors.New("simulated node: Runtime, API and Mounter are required")
	}
	if err := checkSimulated(cfg); err != nil {
		sim.Runtime.Close()
		return fmt.Errorf("simulated node %q: %w", cfg.NodeName, err)
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("node", cfg.NodeName))
	n, err := assemble(ctx, cfg, version, clk, &sim)
	if err != nil {
		return fmt.Errorf("assemble simulated node %q: %w", cfg.NodeName, err)
	}
	defer n.close()
	return n.run(ctx)
}

// hostFacts are the node's addresses and machine facts: the host's, or
// what a simulated node is handed.
func (n *node) hostFacts() ([]string, machine.Info, error) {
	if n.sim != nil {
		return n.sim.IPs, n.sim.Machine, nil
	}
	ips, err := machine.HostIPs(n.cfg.NodeIPs)
	if err != nil {
		return nil, machine.Info{}, err
	}
	host, err := machine.Read(n.cfg.RootDir, machine.OSHost())
	if err != nil {
		return nil, machine.Info{}, fmt.Errorf("read machine information: %w", err)
	}
	return ips, host, nil
}

// simAPI is a simulated node's base rest config and shared pod feed;
// the zero value on a real node (its certificate client's config, a
// watch of its own).
func (n *node) simAPI() simAPI {
	if n.sim == nil {
		return simAPI{}
	}
	return simAPI{base: n.sim.API, pods: n.sim.Pods}
}

// simAPI is what a simulated node's cluster side is handed.
type simAPI struct {
	base *rest.Config
	pods podsource.Feed
}

// mounter is the volume manager's: mount(2) on a real node.
func (n *node) mounter() volume.Mounter {
	if n.sim != nil {
		return n.sim.Mounter
	}
	return volume.SysMounter{MounterPath: n.cfg.MounterPath}
}

// probeHandler is prober.Config.Handler: nil (the real handlers) on a
// real node.
func (n *node) probeHandler() prober.Handler {
	if n.sim == nil {
		return nil
	}
	return n.sim.Probes
}

// newGroup is the group run starts the components in; a simulated node's
// skips the host-only ones.
func (n *node) newGroup(ctx context.Context) *group {
	g := newGroup(ctx, stopBudget, n.clock)
	if n.sim != nil {
		evicts := n.sim.Summary != nil
		g.skip = func(name string) bool { return hostOnly(name) && (name != "eviction" || !evicts) }
	}
	return g
}

// hostOnly names the components a simulated node does not run: they
// serve or watch the host (the device plugin registration socket, the
// pod resources and Pods API sockets, the plugin registry's inotify
// watch, systemd, iptables) or read it (the stats provider's host
// figures, and eviction and image GC, which decide on those, and log
// rotation; eviction runs where the node is handed a Summary). The
// CSINode's initialization runs: the Node is not Ready without it.
func hostOnly(name string) bool {
	switch name {
	case "device-manager", "plugin-manager", "pod-resources", "pods-api", "systemd", "iptables",
		"stats", "eviction", "image-gc", "log-rotation":
		return true
	}
	return false
}

// checkSimulated says why cfg cannot run as a simulated node, or nil.
func checkSimulated(cfg *config.Config) error {
	kc := &cfg.Kubelet
	switch {
	case cfg.Kubeconfig == "":
		return errors.New("a simulated node joins a cluster: set Kubeconfig")
	case kc.CgroupsPerQOS == nil || *kc.CgroupsPerQOS:
		return errors.New("a simulated node makes no cgroups: cgroupsPerQOS must be false")
	case kc.EnableServer == nil || *kc.EnableServer, kc.ReadOnlyPort != 0, kc.HealthzPort == nil || *kc.HealthzPort != 0:
		return errors.New("a simulated node serves no port: enableServer false, readOnlyPort and healthzPort 0")
	case kc.MakeIPTablesUtilChains == nil || *kc.MakeIPTablesUtilChains:
		return errors.New("a simulated node leaves iptables alone: makeIPTablesUtilChains must be false")
	}
	return nil
}

// summary is the stats summary the eviction manager decides on: the stats
// provider's, or a simulated node's model's.
func (n *node) summary() eviction.SummaryFunc {
	if n.sim != nil && n.sim.Summary != nil {
		return n.sim.Summary
	}
	return n.serve.observe.stats.Summary
}
