package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/app/simulate"
	"github.com/berthk8s/berth/internal/config"
)

// simulateFlags are berth simulate's flags.
type simulateFlags struct {
	kubeconfig, prefix, rootDir string
	control, podWatch           string
	nodes                       int
	cpu                         int
	memory, storage             string
	pods                        int32
	labels, taints              []string
	sandbox, container, pull    time.Duration
	latencies, failures         []string
}

// newSimulateCommand is berth simulate: many berth nodes in one process
// on in-memory runtimes (internal/app/simulate).
func newSimulateCommand(d deps) *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "run many simulated berth nodes in one process, on in-memory runtimes",
		Long: `berth simulate runs --nodes berth nodes named <prefix>0 ... <prefix>(N-1) in
one process against the cluster of --kubeconfig. Each is a real berth node
(its Node and Lease, pod source, sync loop, pod workers, planner, status
writer, admission, prober) on its own in-memory container runtime, so it
needs neither root nor containerd. Containers behave as their pods'
sim.berth.dev/ annotations say (see internal/sim/appmodel and the README).
The kubeconfig's identity must be allowed to write every simulated Node.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(version, clock.RealClock{})
			if err != nil {
				return err
			}
			return d.runSimulate(cmd.Context(), cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Path to the kubeconfig of the cluster the nodes join (required).")
	fs.IntVar(&f.nodes, "nodes", 1, "Number of simulated nodes.")
	fs.StringVar(&f.prefix, "node-name-prefix", "berth-sim-", "Prefix of the nodes' names: <prefix>0, <prefix>1, ...")
	fs.StringVar(&f.rootDir, "root-dir", "", "Directory for the nodes' files (a temporary directory, removed at exit, when empty).")
	fs.IntVar(&f.cpu, "cpu", 8, "CPUs of each node.")
	fs.StringVar(&f.memory, "memory", "32Gi", "Memory of each node (a quantity).")
	fs.StringVar(&f.storage, "ephemeral-storage", "100Gi", "Ephemeral storage of each node (a quantity).")
	fs.Int32Var(&f.pods, "max-pods", 110, "Pods each node admits.")
	fs.StringSliceVar(&f.labels, "node-labels", nil, "Labels of every node, key=value, as the kubelet's --node-labels.")
	fs.StringSliceVar(&f.taints, "register-with-taints", nil, "Taints of every node, key[=value]:Effect, as the kubelet's --register-with-taints.")
	fs.DurationVar(&f.sandbox, "sandbox-latency", 0, "How long the runtime takes to run a pod sandbox.")
	fs.DurationVar(&f.container, "container-latency", 0, "How long the runtime takes to start a container.")
	fs.DurationVar(&f.pull, "pull-latency", 0, "How long the runtime takes to pull an image.")
	fs.StringArrayVar(&f.latencies, "latency", nil, "A CRI method's latency on some nodes, [NODES@]METHOD=DURATION (NODES: indices such as 3 or 0-9,20; all when left out), after the -latency flags above; repeatable, later ones win: 0-9@RunPodSandbox=2s.")
	fs.StringVar(&f.podWatch, "pod-watch", "per-node", "How the nodes watch their pods: per-node (a list and watch of its own each, as real nodes make) or shared (one list and watch of every pod bound to a node, for all the nodes: a lighter API load).")
	fs.StringVar(&f.control, "control-address", "", "Serve the control API (GET /nodes, POST and DELETE /nodes/{index}) on this host:port; it authenticates nobody, so keep it on loopback (127.0.0.1:10260). Not served when empty.")
	fs.StringArrayVar(&f.failures, "fail", nil, "Fail a share of a CRI method's calls on some nodes, [NODES@]METHOD=RATE[:CODE] (RATE above 0 and at most 1, spread evenly over the calls; CODE a gRPC code, Unavailable when left out); repeatable: PullImage=0.1, 3@RunPodSandbox=1:DeadlineExceeded.")
	return cmd
}

// config turns the flags into the Sim's configuration (RootDir may stay
// empty: runSimulate makes one).
func (f *simulateFlags) config(version string, clk clock.WithTicker) (simulate.Config, error) {
	if f.kubeconfig == "" {
		return simulate.Config{}, errors.New("simulate: --kubeconfig is required")
	}
	if f.nodes < 0 {
		return simulate.Config{}, fmt.Errorf("simulate: --nodes %d", f.nodes)
	}
	api, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return simulate.Config{}, fmt.Errorf("simulate: read --kubeconfig: %w", err)
	}
	memory, err := resource.ParseQuantity(f.memory)
	if err != nil {
		return simulate.Config{}, fmt.Errorf("simulate: --memory %q: %w", f.memory, err)
	}
	storage, err := resource.ParseQuantity(f.storage)
	if err != nil {
		return simulate.Config{}, fmt.Errorf("simulate: --ephemeral-storage %q: %w", f.storage, err)
	}
	labels, err := config.ParseNodeLabels(f.labels)
	if err != nil {
		return simulate.Config{}, fmt.Errorf("simulate: --node-labels: %w", err)
	}
	taints, err := config.ParseTaints(f.taints)
	if err != nil {
		return simulate.Config{}, fmt.Errorf("simulate: --register-with-taints: %w", err)
	}
	if f.podWatch != "per-node" && f.podWatch != "shared" {
		return simulate.Config{}, fmt.Errorf("simulate: --pod-watch %q: want per-node or shared", f.podWatch)
	}
	var rules []simulate.RuntimeRule
	for _, v := range f.latencies {
		r, err := simulate.ParseLatency(v)
		if err != nil {
			return simulate.Config{}, fmt.Errorf("simulate: --latency %w", err)
		}
		rules = append(rules, r)
	}
	for _, v := range f.failures {
		r, err := simulate.ParseFailure(v)
		if err != nil {
			return simulate.Config{}, fmt.Errorf("simulate: --fail %w", err)
		}
		rules = append(rules, r)
	}
	return simulate.Config{
		Rules: rules,
		API:   api, Kubeconfig: f.kubeconfig, Nodes: f.nodes, Prefix: f.prefix, RootDir: f.rootDir, ControlAddress: f.control,
		SharedPodWatch: f.podWatch == "shared",
		Node: simulate.NodeTemplate{
			Capacity: simulate.Capacity{CPU: f.cpu, Memory: memory.Value(), EphemeralStorage: storage.Value(), Pods: f.pods},
			Labels:   labels, Taints: taints,
		},
		Latency: simulate.Latency{Sandbox: f.sandbox, Container: f.container, Pull: f.pull},
		Clock:   clk, Version: version,
	}, nil
}

// runSimulate runs the Sim until ctx ends, in a temporary root directory
// unless cfg names one.
func runSimulate(ctx context.Context, cfg simulate.Config) error {
	if cfg.RootDir == "" {
		dir, err := os.MkdirTemp("", "berth-simulate-")
		if err != nil {
			return fmt.Errorf("simulate: make root directory: %w", err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		cfg.RootDir = dir
	}
	s, err := simulate.New(cfg)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting berth simulate", "version", version, "nodes", cfg.Nodes, "prefix", cfg.Prefix)
	return s.Run(ctx)
}
