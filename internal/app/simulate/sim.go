package simulate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podsource"
	"github.com/berthk8s/berth/internal/sim/podfeed"
)

// Config is a Sim's.
type Config struct {
	// API is the rest config every node's clients start from; Kubeconfig
	// the file it was read from (a node only checks it is set).
	API        *rest.Config
	Kubeconfig string
	// Nodes are started by Run: Prefix0 … Prefix(Nodes-1).
	Nodes  int
	Prefix string
	// Node is every node's machine, labels and taints.
	Node NodeTemplate
	// Latency is every node's runtime's; Rules then set latencies and
	// failures per method and node.
	Latency Latency
	Rules   []RuntimeRule
	// SharedPodWatch gives every node its pods from one list and watch
	// of the pods bound to any node (internal/sim/podfeed), in place of a
	// watch per node as real nodes make: a lighter API load, a less
	// faithful one.
	SharedPodWatch bool
	// RootDir holds a directory per node. Required.
	RootDir string
	// ControlAddress is where Run serves Handler's control API (host:port,
	// port 0 for any); nowhere when empty.
	ControlAddress string
	Clock          clock.WithTicker
	Version        string
}

// NodeTemplate is what every simulated node has: its machine, and the
// labels and taints it registers with.
type NodeTemplate struct {
	Capacity Capacity
	Labels   map[string]string
	Taints   []corev1.Taint
	// SyncFrequency is the nodes' syncFrequency; the kubelet's default
	// when 0.
	SyncFrequency time.Duration
}

// Capacity is a simulated node's machine.
type Capacity struct {
	CPU              int
	Memory           int64
	EphemeralStorage int64
	Pods             int32
}

// Latency is how long a simulated runtime takes to run a sandbox, start
// a container and pull an image.
type Latency struct {
	Sandbox, Container, Pull time.Duration
}

// ErrRuns is Add's error for a node that runs already; ErrNotRunning
// Remove's for one that does not.
var (
	ErrRuns       = errors.New("runs already")
	ErrNotRunning = errors.New("does not run")
)

// Sim is a set of simulated nodes. Run owns them; Add and Remove ask it,
// from any goroutine, while it runs.
type Sim struct {
	cfg      Config
	client   kubernetes.Interface
	requests chan request
	// feed is the shared pod watch (SharedPodWatch), set by Run before
	// it starts a node and read by Run's goroutine alone.
	feed podsource.Feed
}

// request asks Run to start (add) or stop node index, or (list) for the
// nodes that run, into running.
type request struct {
	add, list bool
	index     int
	running   *[]int
	reply     chan error
}

// running is a node Run started.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

// New validates cfg; it starts nothing.
func New(cfg Config) (*Sim, error) {
	switch {
	case cfg.API == nil || cfg.Kubeconfig == "":
		return nil, errors.New("simulate: API and Kubeconfig are required")
	case cfg.RootDir == "" || cfg.Clock == nil:
		return nil, errors.New("simulate: RootDir and Clock are required")
	case cfg.Nodes < 0:
		return nil, fmt.Errorf("simulate: %d nodes", cfg.Nodes)
	case cfg.Node.Capacity.CPU <= 0 || cfg.Node.Capacity.Memory <= 0 || cfg.Node.Capacity.Pods <= 0:
		return nil, errors.New("simulate: capacity needs cpu, memory and pods")
	}
	client, err := kubernetes.NewForConfig(cfg.API)
	if err != nil {
		return nil, fmt.Errorf("simulate: create API client: %w", err)
	}
	return &Sim{cfg: cfg, client: client, requests: make(chan request)}, nil
}

// Name is node index's name.
func (s *Sim) Name(index int) string { return fmt.Sprintf("%s%d", s.cfg.Prefix, index) }

// Run starts the Config's nodes and serves Add and Remove until ctx
// ends, then stops every node (their pods' runtimes go with them) and
// returns once all have.
func (s *Sim) Run(ctx context.Context) error {
	if s.cfg.ControlAddress != "" {
		stop, err := s.serveControl(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	if s.cfg.SharedPodWatch {
		stop, err := s.runFeed(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	nodes := map[int]*running{}
	defer s.stopAll(ctx, nodes)
	for i := range s.cfg.Nodes {
		if err := s.start(ctx, nodes, i); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("Simulated nodes started", "nodes", len(nodes), "prefix", s.cfg.Prefix)
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-s.requests:
			r.reply <- s.serve(ctx, nodes, r)
		}
	}
}

func (s *Sim) serve(ctx context.Context, nodes map[int]*running, r request) error {
	if r.list {
		*r.running = slices.Sorted(maps.Keys(nodes))
		return nil
	}
	n, ok := nodes[r.index]
	switch {
	case r.add && ok:
		return fmt.Errorf("node %s %w", s.Name(r.index), ErrRuns)
	case r.add:
		return s.start(ctx, nodes, r.index)
	case !ok:
		return fmt.Errorf("node %s %w", s.Name(r.index), ErrNotRunning)
	}
	delete(nodes, r.index)
	n.cancel()
	return <-n.done
}

func (s *Sim) start(ctx context.Context, nodes map[int]*running, i int) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	if err := s.startNode(ctx, i, s.Name(i), done); err != nil {
		cancel()
		return fmt.Errorf("start simulated node %s: %w", s.Name(i), err)
	}
	nodes[i] = &running{cancel: cancel, done: done}
	return nil
}

func (s *Sim) stopAll(ctx context.Context, nodes map[int]*running) {
	for _, n := range nodes {
		n.cancel()
	}
	ids := make([]int, 0, len(nodes))
	for i := range nodes {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	for _, i := range ids {
		if err := <-nodes[i].done; err != nil {
			klog.FromContext(ctx).Error(err, "Simulated node stopped with an error", "node", s.Name(i))
		}
	}
}

// runFeed runs the shared pod watch until stop, which returns once it
// has ended; the nodes must have stopped first (Run's defers).
func (s *Sim) runFeed(ctx context.Context) (stop func(), err error) {
	feed, err := podfeed.New(podfeed.Config{Client: s.client, Clock: s.cfg.Clock})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	s.feed = feed
	return func() { cancel(); <-done }, nil
}

// Add starts node index (Prefix<index>) in the running Sim.
func (s *Sim) Add(ctx context.Context, index int) error {
	return s.ask(ctx, request{add: true, index: index})
}

// Remove stops node index and deletes its Node and Lease from the API.
// Its pods' containers go with its runtime; the API's pods bound to it
// are the control plane's to garbage-collect, as for any deleted node.
func (s *Sim) Remove(ctx context.Context, index int) error {
	if err := s.ask(ctx, request{index: index}); err != nil {
		return err
	}
	name := s.Name(index)
	if err := s.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete lease of node %q: %w", name, err)
	}
	if err := s.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete node %q: %w", name, err)
	}
	return nil
}

// Running lists the indices of the nodes that run, in order.
func (s *Sim) Running(ctx context.Context) ([]int, error) {
	var out []int
	err := s.ask(ctx, request{list: true, running: &out})
	return out, err
}

func (s *Sim) ask(ctx context.Context, r request) error {
	r.reply = make(chan error, 1)
	select {
	case s.requests <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
