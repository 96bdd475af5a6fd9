package simulate

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/config"
)

// InCluster is Config.Kubeconfig when the nodes use the pod's service
// account (berth simulate run as a Deployment without --kubeconfig).
const InCluster = "(in-cluster service account)"

// Flags are berth simulate's command-line flags (cmd/berth), here so that
// what a manifest passes (examples/simulate) is parsed by the same code
// in tests.
type Flags struct {
	kubeconfig, prefix, rootDir string
	control, podWatch           string
	nodes                       int
	node                        nodeFlags
	runtime                     runtimeFlags
}

// nodeFlags are every node's shape.
type nodeFlags struct {
	cpu             int
	memory, storage string
	pods            int32
	labels, taints  []string
}

// runtimeFlags are the runtimes' latencies and failures.
type runtimeFlags struct {
	sandbox, container, pull time.Duration
	latencies, failures      []string
}

// AddFlags adds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Path to the kubeconfig of the cluster the nodes join; in a pod, the pod's service account when empty.")
	fs.IntVar(&f.nodes, "nodes", 1, "Number of simulated nodes.")
	fs.StringVar(&f.prefix, "node-name-prefix", "berth-sim-", "Prefix of the nodes' names: <prefix>0, <prefix>1, ...")
	fs.StringVar(&f.rootDir, "root-dir", "", "Directory for the nodes' files (a temporary directory, removed at exit, when empty).")
	fs.IntVar(&f.node.cpu, "cpu", 8, "CPUs of each node.")
	fs.StringVar(&f.node.memory, "memory", "32Gi", "Memory of each node (a quantity).")
	fs.StringVar(&f.node.storage, "ephemeral-storage", "100Gi", "Ephemeral storage of each node (a quantity).")
	fs.Int32Var(&f.node.pods, "max-pods", 110, "Pods each node admits.")
	fs.StringSliceVar(&f.node.labels, "node-labels", nil, "Labels of every node, key=value, as the kubelet's --node-labels.")
	fs.StringSliceVar(&f.node.taints, "register-with-taints", nil, "Taints of every node, key[=value]:Effect, as the kubelet's --register-with-taints.")
	fs.DurationVar(&f.runtime.sandbox, "sandbox-latency", 0, "How long the runtime takes to run a pod sandbox.")
	fs.DurationVar(&f.runtime.container, "container-latency", 0, "How long the runtime takes to start a container.")
	fs.DurationVar(&f.runtime.pull, "pull-latency", 0, "How long the runtime takes to pull an image.")
	fs.StringArrayVar(&f.runtime.latencies, "latency", nil, "A CRI method's latency on some nodes, [NODES@]METHOD=DURATION (NODES: indices such as 3 or 0-9,20; all when left out), after the -latency flags above; repeatable, later ones win: 0-9@RunPodSandbox=2s.")
	fs.StringArrayVar(&f.runtime.failures, "fail", nil, "Fail a share of a CRI method's calls on some nodes, [NODES@]METHOD=RATE[:CODE] (RATE above 0 and at most 1, spread evenly over the calls; CODE a gRPC code, Unavailable when left out); repeatable: PullImage=0.1, 3@RunPodSandbox=1:DeadlineExceeded.")
	fs.StringVar(&f.podWatch, "pod-watch", "per-node", "How the nodes watch their pods: per-node (a list and watch of its own each, as real nodes make) or shared (one list and watch of every pod bound to a node, for all the nodes: a lighter API load).")
	fs.StringVar(&f.control, "control-address", "", "Serve the control API (GET /nodes, POST and DELETE /nodes/{index}) on this host:port; it authenticates nobody, so keep it on loopback (127.0.0.1:10260). Not served when empty.")
}

// Config turns the flags into a Sim's configuration (RootDir may stay
// empty: the command makes one). Without --kubeconfig it takes the
// pod's service account (rest.InClusterConfig), and refuses outside a
// pod.
func (f *Flags) Config(version string, clk clock.WithTicker) (Config, error) {
	if f.nodes < 0 {
		return Config{}, fmt.Errorf("simulate: --nodes %d", f.nodes)
	}
	api, kubeconfig, err := f.api()
	if err != nil {
		return Config{}, err
	}
	memory, err := resource.ParseQuantity(f.node.memory)
	if err != nil {
		return Config{}, fmt.Errorf("simulate: --memory %q: %w", f.node.memory, err)
	}
	storage, err := resource.ParseQuantity(f.node.storage)
	if err != nil {
		return Config{}, fmt.Errorf("simulate: --ephemeral-storage %q: %w", f.node.storage, err)
	}
	labels, err := config.ParseNodeLabels(f.node.labels)
	if err != nil {
		return Config{}, fmt.Errorf("simulate: --node-labels: %w", err)
	}
	taints, err := config.ParseTaints(f.node.taints)
	if err != nil {
		return Config{}, fmt.Errorf("simulate: --register-with-taints: %w", err)
	}
	if f.podWatch != "per-node" && f.podWatch != "shared" {
		return Config{}, fmt.Errorf("simulate: --pod-watch %q: want per-node or shared", f.podWatch)
	}
	var rules []RuntimeRule
	for _, v := range f.runtime.latencies {
		r, err := ParseLatency(v)
		if err != nil {
			return Config{}, fmt.Errorf("simulate: --latency %w", err)
		}
		rules = append(rules, r)
	}
	for _, v := range f.runtime.failures {
		r, err := ParseFailure(v)
		if err != nil {
			return Config{}, fmt.Errorf("simulate: --fail %w", err)
		}
		rules = append(rules, r)
	}
	return Config{
		API: api, Kubeconfig: kubeconfig, Nodes: f.nodes, Prefix: f.prefix, RootDir: f.rootDir,
		ControlAddress: f.control, SharedPodWatch: f.podWatch == "shared",
		Node: NodeTemplate{
			Capacity: Capacity{CPU: f.node.cpu, Memory: memory.Value(), EphemeralStorage: storage.Value(), Pods: f.node.pods},
			Labels:   labels, Taints: taints,
		},
		Latency: Latency{Sandbox: f.runtime.sandbox, Container: f.runtime.container, Pull: f.runtime.pull},
		Rules:   rules,
		Clock:   clk, Version: version,
	}, nil
}

// api is the rest config of --kubeconfig, or the pod's service
// account's, and what Config.Kubeconfig says of it.
func (f *Flags) api() (*rest.Config, string, error) {
	if f.kubeconfig != "" {
		api, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
		if err != nil {
			return nil, "", fmt.Errorf("simulate: read --kubeconfig: %w", err)
		}
		return api, f.kubeconfig, nil
	}
	api, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, "", errors.New("simulate: --kubeconfig is required outside a pod")
	}
	if err != nil {
		return nil, "", fmt.Errorf("simulate: the pod's service account: %w", err)
	}
	return api, InCluster, nil
}
