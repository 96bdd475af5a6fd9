package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/test/bench"
	"github.com/berthk8s/berth/test/cluster"
	"github.com/berthk8s/berth/test/criproxy"
)

// env is one kubelet's run of one scenario: its Node and the clients.
type env struct {
	cfg       *Config
	kubelet   bench.Kubelet
	node      *bench.Node
	name, dir string
	kubecfg   string
	client    kubernetes.Interface
	runtime   runtimeapi.RuntimeServiceClient // straight to the runtime, past the proxy
	proxy     *criproxy.Proxy
	cl        *cluster.Cluster
	host      host
	rand      *rand.Rand
	out       *Outcome
}

// root is the kubelet's root directory.
func (e *env) root() string { return filepath.Join(e.dir, "root") }

// start starts the kubelet (again, after a kill: same directory, same
// Node) and waits for it to report its Node Ready: a Ready condition
// whose heartbeat is newer than the start (a Node a killed kubelet left
// stays Ready for a while). A kubelet that exits meanwhile fails it.
func (e *env) start(ctx context.Context) error {
	prev := e.lastHeartbeat(ctx)
	// Heartbeats have a resolution of one second: one from a kubelet
	// started within the second of prev would not be newer.
	if err := sleep(ctx, time.Until(prev.Add(time.Second))); err != nil {
		return err
	}
	n, err := e.kubelet.Start(e.name, e.dir, e.kubecfg, e.cfg.NodeIP, "unix://"+e.proxy.Socket())
	if err != nil {
		return err
	}
	e.node = n
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := n.Running(); err != nil {
			return err
		}
		node, err := e.client.CoreV1().Nodes().Get(ctx, e.name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.Time.After(prev) {
					return n.Running()
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for Node %s Ready: not reported Ready in 3m (%v)", e.name, err)
		}
		if err := sleep(ctx, poll); err != nil {
			return err
		}
	}
}

// lastHeartbeat is the heartbeat of the Node's Ready condition now (zero
// for none): a kubelet started after it reports Ready with a later one.
func (e *env) lastHeartbeat(ctx context.Context) time.Time {
	node, err := e.client.CoreV1().Nodes().Get(ctx, e.name, metav1.GetOptions{})
	if err != nil {
		return time.Time{}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastHeartbeatTime.Time
		}
	}
	return time.Time{}
}

// logPath is the kubelet's log (bench.Kubelet.Start appends to it).
func (e *env) logPath() string { return filepath.Join(e.dir, e.kubelet.Name+".log") }

// logSize is the log's size now.
func (e *env) logSize() int64 {
	fi, err := os.Stat(e.logPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logSince is what the log gained after offset (at most 1 MiB of it).
func (e *env) logSince(offset int64) string {
	f, err := os.Open(e.logPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(io.NewSectionReader(f, offset, 1<<40), 1<<20))
	return string(b)
}

// leakedTaskWait is how long settle waits for a kubelet to clean up
// before it looks for tasks containerd leaked: longer than a clean
// clean-up takes (2-5 s in the soak), well within Settle.
const leakedTaskWait = 30 * time.Second

// settle waits up to cfg.Settle for the kubelet to leave nothing behind,
// and records what is left and how long it took. Past leakedTaskWait it
// kills, once, the tasks containerd leaked under starts the kill cut
// (bench.KillLeakedTasks): no kubelet can remove those containers, and
// with them gone the kubelet must clean up the rest as for any other pod.
func (e *env) settle(ctx context.Context, prefix string) Leftovers {
	began := time.Now()
	killed := false
	for {
		l, err := e.host.leftovers(ctx, e.root())
		if err != nil {
			e.out.promise(false, "%s: read leftovers: %v", prefix, err)
			return l
		}
		if l.Total() != 0 && !killed && time.Since(began) > leakedTaskWait {
			killed = true
			n, err := bench.KillLeakedTasks(ctx, e.runtime, e.cfg.CRIEndpoint, "")
			if err != nil {
				e.cfg.Logf("%skill leaked runtime tasks: %v", prefix, err)
			}
			if n > 0 {
				e.cfg.Logf("%skilled %d task(s) containerd leaked under a start cut by the kill", prefix, n)
				e.out.add(prefix+"runtime tasks leaked by cut starts, killed", "", float64(n))
			}
		}
		if l.Total() == 0 || time.Since(began) > e.cfg.Settle || ctx.Err() != nil {
			e.out.add(prefix+"leftovers", "", float64(l.Total()))
			e.out.add(prefix+"cleanup", "s", time.Since(began).Round(time.Second).Seconds())
			e.out.promise(l.Total() == 0, "%sleft behind %v seconds after its pods went: %s", prefix, e.cfg.Settle.Seconds(), l)
			return l
		}
		_ = sleep(ctx, 2*time.Second)
	}
}

// Run runs every scenario of cfg for every kubelet and reports. The
// control plane and the CRI proxy are started for the run and stopped at
// its end.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	cl, err := cluster.Start(ctx, cluster.Options{BinDir: cfg.BinDir, TempDir: cfg.WorkDir})
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			cfg.Logf("stop control plane: %v", err)
		}
	}()
	rc, err := clientcmd.BuildConfigFromFlags("", cl.AdminKubeconfig())
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 500, 500
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	rt, err := cri.Dial(ctx, cri.Options{RuntimeEndpoint: cfg.CRIEndpoint, Timeout: 2 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("connect to the runtime: %w", err)
	}
	defer rt.Close()
	proxy, err := criproxy.Start(filepath.Join(cfg.WorkDir, "cri-proxy.sock"), cfg.CRIEndpoint)
	if err != nil {
		return nil, err
	}
	defer proxy.Stop()
	if err := waitServiceAccount(ctx, client); err != nil {
		return nil, err
	}
	r := &Report{}
	for _, k := range cfg.Kubelets {
		r.Kubelets = append(r.Kubelets, k.Name)
	}
	scenarios := map[string]func(context.Context, *env) error{
		ScenarioChurn: churn, ScenarioCrash: crash, ScenarioCrashVolumes: crashVolumes, ScenarioCrashResize: crashResize, ScenarioRuntime: runtimeRestart, ScenarioCRI: criFaults, ScenarioAPI: apiOutage, ScenarioAPIStorm: apiStorm, ScenarioDiskFull: diskFull,
		ScenarioCheckpoints: checkpoints,
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 1))
	for _, s := range Scenarios {
		if !cfg.runs(s) {
			continue
		}
		for _, k := range cfg.Kubelets {
			e := &env{cfg: &cfg, kubelet: k, name: fmt.Sprintf("soak-%s-%s", k.Name, s), client: client, runtime: rt.Runtime,
				proxy: proxy, cl: cl, host: host{runtime: rt.Runtime, cgroupRoot: cfg.CgroupRoot, cniDir: cfg.CNIDir}, rand: rng, out: &Outcome{}}
			cfg.Logf("%s: %s", s, k.Name)
			e.out.Err = runScenario(ctx, e, scenarios[s])
			r.set(s, k.Name, e.out)
			one := &Report{Kubelets: []string{k.Name}}
			one.set(s, k.Name, e.out)
			cfg.Logf("%s", one.Markdown())
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
		}
	}
	return r, nil
}

// runScenario runs one scenario on a fresh Node, and cleans up after it.
func runScenario(ctx context.Context, e *env, scenario func(context.Context, *env) error) error {
	proxyFaultsCleared(e)
	if err := bench.RemoveAllSandboxes(ctx, e.runtime, e.cfg.CRIEndpoint); err != nil {
		return err
	}
	e.dir = filepath.Join(e.cfg.WorkDir, e.name)
	var err error
	if e.kubecfg, err = e.cl.NodeKubeconfig(e.name); err != nil {
		return err
	}
	defer func() {
		proxyFaultsCleared(e)
		if e.node != nil {
			e.node.Stop(ctx)
		}
		if err := e.client.CoreV1().Nodes().Delete(ctx, e.name, metav1.DeleteOptions{}); err != nil {
			e.cfg.Logf("delete Node %s: %v", e.name, err)
		}
		if err := bench.RemoveAllSandboxes(ctx, e.runtime, e.cfg.CRIEndpoint); err != nil {
			e.cfg.Logf("remove sandboxes: %v", err)
		}
		if err := bench.RemoveDir(e.root()); err != nil {
			e.cfg.Logf("remove %s: %v", e.root(), err)
		}
	}()
	if err := e.start(ctx); err != nil {
		return err
	}
	return scenario(ctx, e)
}

func proxyFaultsCleared(e *env) { e.proxy.Clear() }

// waitServiceAccount waits for the default ServiceAccount pods need.
func waitServiceAccount(ctx context.Context, c kubernetes.Interface) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := c.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for the default ServiceAccount: %w", err)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return errors.Join(err, ctx.Err())
		}
	}
}
