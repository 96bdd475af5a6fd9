package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/test/cluster"
)

// Config is one benchmark run.
type Config struct {
	Kubelets []Kubelet // berth and the upstream kubelet, measured in this order
	// Configurations are KubeletConfig's names, measured in this order:
	// every kubelet, every repeat in each.
	Configurations []string
	CRIEndpoint    string
	NodeIP         string
	PodLogsDir     string
	Repeats        int   // of every scenario (at least 1)
	Bursts         []int // pod counts, e.g. 30 and 100
	// Density is the pod count of the density scenario (a burst, its
	// steady state, its deletion, after Bursts); 0 leaves it out.
	Density int
	MaxPods int // both kubelets' maxPods
	// Heap profiles berth's heap at heapSteps in the first repeat of every
	// configuration, into WorkDir/heap.
	Heap    bool
	Steady  time.Duration // steady-state sampling window
	Settle  time.Duration // wait before steady-state sampling
	WorkDir string        // cluster, kubelet root dirs and logs
	BinDir  string        // control plane binaries ("" = default)
	// IdleThreshold is the share of the machine's CPU others may use (see
	// idle.go); AllowBusy runs even when the machine is busy before the
	// run (the figures then carry a warning).
	IdleThreshold float64
	AllowBusy     bool
	Logf          func(format string, args ...any)
}

// Result is a run's samples, by configuration (each with the CRI floor's,
// which no configuration changes), berth's heap profiles and what the
// idle-machine check saw.
type Result struct {
	Samples map[string]Samples
	Heaps   []HeapPoint
	Idle    IdleReport
}

// runner carries one run's clients and results. One goroutine uses it.
type runner struct {
	cfg        Config
	cl         *cluster.Cluster
	client     kubernetes.Interface
	kubeletAPI *http.Client // see kubeletClient
	criClient  *cri.Client
	containerd int
	conf       string  // the configuration being measured
	samples    Samples // conf's (the floor's while it runs)
	byConf     map[string]Samples
	heaps      []HeapPoint
}

// Run checks that the machine is idle, measures every kubelet in every
// configuration, then the floor, and returns the samples. The control plane is started for the run
// and stopped at its end. Others' use of the CPU is sampled all along.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := validatePlan(cfg.Bursts, cfg.Density, cfg.MaxPods); err != nil {
		return Result{}, err
	}
	if len(cfg.Configurations) == 0 {
		return Result{}, fmt.Errorf("no configurations")
	}
	for _, c := range cfg.Configurations {
		if _, err := KubeletConfig(c, ColBerth, NodeConfig{}); err != nil {
			return Result{}, err
		}
	}
	containerd, err := RuntimePID(cfg.CRIEndpoint)
	if err != nil {
		return Result{}, err
	}
	before, err := CheckIdle(ctx, 10*time.Second, containerd)
	if err != nil {
		return Result{}, fmt.Errorf("check that the machine is idle: %w", err)
	}
	cfg.Logf("before the run, other processes use %.0f%% of the machine's CPU (threshold %.0f%%)", before*100, cfg.IdleThreshold*100)
	if before > cfg.IdleThreshold && !cfg.AllowBusy {
		return Result{Idle: summarizeIdle(cfg.IdleThreshold, before, nil)}, fmt.Errorf(
			"the machine is busy: other processes use %.0f%% of its CPU, more than %.0f%% (-allow-busy runs anyway, with a warning)",
			before*100, cfg.IdleThreshold*100)
	}
	mon := &idleMonitor{containerd: containerd}
	monCtx, stopMon := context.WithCancel(ctx)
	monDone := make(chan struct{})
	go func() { mon.run(monCtx); close(monDone) }()
	r := &runner{cfg: cfg, byConf: map[string]Samples{}}
	err = r.run(ctx)
	stopMon()
	<-monDone
	res := Result{Samples: r.byConf, Heaps: r.heaps, Idle: mon.report(cfg.IdleThreshold, before)}
	for _, w := range res.Idle.Warnings {
		cfg.Logf("WARNING: %s", w)
	}
	return res, err
}

// run measures every kubelet in every configuration, then the floor.
func (r *runner) run(ctx context.Context) error {
	cfg := r.cfg
	cl, err := cluster.Start(ctx, cluster.Options{BinDir: cfg.BinDir, TempDir: cfg.WorkDir, AuditLog: true})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			cfg.Logf("stop control plane: %v", err)
		}
	}()
	r.cl = cl
	if err := r.connect(ctx); err != nil {
		return err
	}
	defer r.criClient.Close()
	for _, conf := range cfg.Configurations {
		r.conf, r.samples = conf, Samples{}
		r.byConf[conf] = r.samples
		for _, k := range cfg.Kubelets {
			for rep := 1; rep <= cfg.Repeats; rep++ {
				if err := r.runKubelet(ctx, k, rep); err != nil {
					return fmt.Errorf("%s, %s, repeat %d: %w", conf, k.Name, rep, err)
				}
			}
			fi, err := os.Stat(k.Binary)
			if err != nil {
				return err
			}
			r.samples.Add("binary_size", k.Name, float64(fi.Size())/(1<<20))
		}
	}
	r.conf, r.samples = ColFloor, Samples{}
	for rep := 1; rep <= cfg.Repeats; rep++ {
		if err := r.runFloor(ctx, rep); err != nil {
			return fmt.Errorf("floor, repeat %d: %w", rep, err)
		}
	}
	for _, s := range r.byConf {
		s.merge(r.samples)
		AddKubeletAdded(s, allBursts(cfg.Bursts, cfg.Density))
	}
	return nil
}

// connect makes the API and CRI clients and waits for the default
// ServiceAccount that pods need.
func (r *runner) connect(ctx context.Context) error {
	rc, err := clientcmd.BuildConfigFromFlags("", r.cl.AdminKubeconfig())
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 1000, 1000
	if r.client, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	if r.criClient, err = cri.Dial(ctx, cri.Options{RuntimeEndpoint: r.cfg.CRIEndpoint, Timeout: 2 * time.Minute}); err != nil {
		return fmt.Errorf("connect to the runtime: %w", err)
	}
	if r.containerd, err = RuntimePID(r.cfg.CRIEndpoint); err != nil {
		return err
	}
	kp, err := r.cl.IssueClientCert("berth-bench", "system:masters")
	if err != nil {
		return err
	}
	if r.kubeletAPI, err = kubeletClient(kp); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := r.client.CoreV1().ServiceAccounts(benchNamespace).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for the default ServiceAccount: %w", err)
		}
		time.Sleep(time.Second)
	}
}

// runKubelet runs every scenario once for kubelet k on a fresh Node, in
// configuration r.conf.
func (r *runner) runKubelet(ctx context.Context, k Kubelet, rep int) error {
	kcfg, err := KubeletConfig(r.conf, k.Name, NodeConfig{CRIEndpoint: r.cfg.CRIEndpoint, ClientCAFile: r.cl.CAFile(), MaxPods: r.cfg.MaxPods})
	if err != nil {
		return err
	}
	if err := RemoveAllSandboxes(ctx, r.criClient.Runtime, r.cfg.CRIEndpoint); err != nil {
		return err
	}
	nodeName := fmt.Sprintf("bench-%s-%s-%d", r.conf, k.Name, rep)
	kubeconfig, err := r.cl.NodeKubeconfig(nodeName)
	if err != nil {
		return err
	}
	dir := filepath.Join(r.cfg.WorkDir, nodeName)
	readyCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	start := time.Now()
	n, err := k.StartWith(nodeName, dir, kubeconfig, r.cfg.NodeIP, kcfg)
	if err != nil {
		return err
	}
	defer r.finish(ctx, n)
	ready, err := WaitNodeReady(readyCtx, r.client, nodeName)
	if err != nil {
		return fmt.Errorf("wait for Node %s Ready: %w (%v)", nodeName, err, n.Running())
	}
	r.samples.Add("start_ready", k.Name, ready.Sub(start).Seconds())
	r.cfg.Logf("%s: Node Ready %.2fs after start", nodeName, ready.Sub(start).Seconds())
	heap := r.cfg.Heap && rep == 1 && k.Name == ColBerth
	if rep == 1 {
		if err := r.steady(ctx, loadIdle, k.Name, n, ""); err != nil {
			return err
		}
	}
	if heap {
		r.heap(ctx, r.heapDir(), 0)
	}
	for _, st := range planBursts(r.cfg.Bursts, r.cfg.Density, rep) {
		if err := r.burst(ctx, k.Name, n, rep, st); err != nil {
			return err
		}
		if err := n.Running(); err != nil {
			return err
		}
	}
	if heap {
		return r.heapLadder(ctx, n)
	}
	return nil
}

// steady samples the kubelet and containerd (each with its children) for
// cfg.Steady after cfg.Settle; with user set, it also counts that user's
// API requests in the window.
func (r *runner) steady(ctx context.Context, load, col string, n *Node, user string) error {
	time.Sleep(r.cfg.Settle)
	from := time.Now()
	got, err := sampleProcs(ctx, r.cfg.Steady, n.Pid(), r.containerd)
	if err != nil {
		return err
	}
	to := time.Now()
	for _, p := range []struct {
		prefix string
		pid    int
	}{{load, n.Pid()}, {load + "_containerd", r.containerd}} {
		cpu, rss := usage(got[p.pid])
		r.samples.Add(p.prefix+"_cpu", col, cpu...)
		r.samples.Add(p.prefix+"_rss", col, rss...)
		r.samples.Add(p.prefix+"_cpu_spm", col, cpuSecondsPerMinute(got[p.pid]))
	}
	if user == "" {
		return nil
	}
	f, err := os.Open(r.cl.AuditLogPath())
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	count, err := countRequests(f, user, from, to)
	if err != nil {
		return err
	}
	r.samples.Add(apiKey(load), col, float64(count)/to.Sub(from).Minutes())
	return nil
}

// finish stops the kubelet, deletes its Node and removes its directory.
func (r *runner) finish(ctx context.Context, n *Node) {
	n.Stop(ctx)
	if err := r.client.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
		r.cfg.Logf("delete Node %s: %v", n.name, err)
	}
	if err := RemoveDir(filepath.Join(n.dir, "root")); err != nil {
		r.cfg.Logf("remove %s: %v", n.dir, err)
	}
}

// runFloor makes and deletes every burst straight through the CRI.
func (r *runner) runFloor(ctx context.Context, rep int) error {
	if err := RemoveAllSandboxes(ctx, r.criClient.Runtime, r.cfg.CRIEndpoint); err != nil {
		return err
	}
	f := &Floor{Runtime: r.criClient.Runtime, PodLogsDir: r.cfg.PodLogsDir}
	for _, b := range allBursts(r.cfg.Bursts, r.cfg.Density) {
		run := fmt.Sprintf("floor-%d-b%d", rep, b)
		pods, perPod, all, err := f.Start(ctx, run, b)
		if err != nil {
			return err
		}
		r.samples.Add(fmt.Sprintf("burst%d_pod", b), ColFloor, perPod...)
		r.samples.Add(repeatKey(b, rep), ColFloor, perPod...)
		r.samples.Add(fmt.Sprintf("burst%d_all", b), ColFloor, all)
		perPod, all, err = f.Delete(ctx, pods)
		if err != nil {
			return err
		}
		r.samples.Add(fmt.Sprintf("delete%d_pod", b), ColFloor, perPod...)
		r.samples.Add(fmt.Sprintf("delete%d_all", b), ColFloor, all)
		r.cfg.Logf("%s: %d pods started and removed through the CRI", run, b)
	}
	return nil
}
