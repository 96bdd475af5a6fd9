package simbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/berthk8s/berth/test/cluster"
)

// Run runs every simulator at every size, sizes in order and the
// simulators in the table's order at each, each on a control plane of its
// own, and returns a result for each run made or skipped. Only ctx's end
// stops it early (the error is then ctx's); a run that fails is a result.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	var results []Result
	for _, n := range cfg.Sizes {
		for _, sim := range cfg.Simulators {
			if err := ctx.Err(); err != nil {
				return results, err
			}
			cfg.Logf("%s, %d nodes: starting", sim, n)
			r := runOne(ctx, cfg, sim, n, results)
			cfg.Logf("%s, %d nodes: %s %s", sim, n, r.Status, r.Note)
			results = append(results, r)
		}
	}
	return results, ctx.Err()
}

// runOne runs sim with n nodes on a fresh control plane, unless an
// earlier run's memory per node says it does not fit.
func runOne(ctx context.Context, cfg Config, sim string, n int, earlier []Result) Result {
	r := Result{Simulator: sim, Nodes: n, PodsPerNode: cfg.PodsPerNode, LoadAvg: loadAvg()}
	if est, ok := nodeEstimate(earlier, sim); ok {
		if avail, err := memAvailable(); err == nil && !fits(n, est, avail, cfg.MemFloor) {
			r.Status, r.NodeBytes = StatusNoFit, est
			r.Note = fmt.Sprintf("%s (measured at a smaller size; not started: %d nodes need ~%.1f GiB, MemAvailable was %.1f GiB, floor %.1f GiB)",
				noFitNote(est), n, gib(uint64(n)*est), gib(avail), gib(cfg.MemFloor))
			return r
		}
	}
	dir, err := os.MkdirTemp(cfg.WorkDir, fmt.Sprintf("%s-%d-", sim, n))
	if err != nil {
		return failed(r, err)
	}
	defer os.RemoveAll(dir)
	c, err := cluster.Start(ctx, cluster.Options{BinDir: cfg.BinDir, TempDir: dir, AuditLog: true})
	if err != nil {
		return classify(ctx, r, err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			cfg.Logf("%s, %d nodes: stop the control plane: %v", sim, n, err)
		}
	}()
	client, err := harnessClient(c.AdminKubeconfig())
	if err != nil {
		return failed(r, err)
	}
	if err := prepareNamespace(ctx, client); err != nil {
		return classify(ctx, r, err)
	}
	env := runEnv{cfg: cfg, cluster: c, client: client, dir: dir, nodes: n}
	var m marks
	err = measureRun(ctx, sim, env, &r, &m)
	if countErr := countRequests(c.AuditLogPath(), sim, &r, m); err == nil && countErr != nil {
		err = countErr
	}
	if err != nil {
		return classify(ctx, r, err)
	}
	r.Status = StatusOK
	return r
}

// marks are the instants a run's request counts span.
type marks struct {
	start, ready, create, running time.Time
}

// measureRun starts the simulator, waits for its nodes, measures it idle,
// creates the pods, waits for them and measures it busy, filling r; the
// simulator is stopped when it returns.
func measureRun(ctx context.Context, sim string, env runEnv, r *Result, m *marks) (err error) {
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	procs := &procSet{fail: fail}
	logf := func(format string, args ...any) {
		env.cfg.Logf("%s, %d nodes: "+format, append([]any{sim, env.nodes}, args...)...)
	}
	undo, err := prepareHost(sim, logf)
	if err != nil {
		return err
	}
	defer func() {
		procs.stop()
		err = errors.Join(err, undo(procs.list()))
	}()
	defer func() { err = withCause(runCtx, err) }()
	started := func() int {
		if sim == Kubemark {
			return len(procs.list())
		}
		return env.nodes
	}
	go guardMemory(runCtx, env.cfg.MemFloor, procs, started, fail)

	m.start = time.Now()
	if err := launch(runCtx, sim, env, procs); err != nil {
		return fmt.Errorf("start %s: %w", sim, err)
	}
	ready := newArrivals(m.start)
	err = timed(runCtx, env.cfg.ReadyTimeout, "nodes Ready", func(ctx context.Context) error {
		return waitNodesReady(ctx, env.client, nodePrefix(sim), env.nodes, ready, logf)
	})
	r.NodesReady, r.ReadyProgress = ready.count(), milestones(ready.sorted(), env.nodes)
	if err != nil {
		return err
	}
	m.ready = time.Now()
	r.ReadySeconds = m.ready.Sub(m.start).Seconds()
	logf("all Ready in %.1f s; idle window", r.ReadySeconds)
	if r.Idle, err = settleAndMeasure(runCtx, env.cfg, procs); err != nil {
		return err
	}
	return measureBusy(runCtx, sim, env, r, m, procs, logf)
}

// prepareHost does what sim's processes need of the host and returns
// what undoes it once they have stopped: for kubemark, upstream's inotify
// limit (inotify.go) and the hollow kubelets' own directories.
func prepareHost(sim string, logf func(string, ...any)) (undo func([]*child) error, err error) {
	if sim != Kubemark {
		return func([]*child) error { return nil }, nil
	}
	restore, raised, err := raiseInotifyInstances(hollowInotifyInstances)
	if err != nil {
		return nil, err
	}
	if raised {
		logf("fs.inotify.max_user_instances raised to %d for the run, as upstream's hollow-node template does", hollowInotifyInstances)
	}
	return func(children []*child) error {
		return errors.Join(removeHollowRoots(children), restore())
	}, nil
}

// measureBusy creates the pods, waits for them all Running and measures
// the busy window.
func measureBusy(ctx context.Context, sim string, env runEnv, r *Result, m *marks, procs *procSet, logf func(string, ...any)) error {
	want := env.nodes * env.cfg.PodsPerNode
	m.create = time.Now()
	running := newArrivals(m.create)
	done := make(chan error, 1)
	go func() {
		done <- timed(ctx, env.cfg.RunningTimeout, "pods Running", func(ctx context.Context) error {
			return waitPodsRunning(ctx, env.client, want, running, logf)
		})
	}()
	err := createPods(ctx, env.client, sim, env.nodes, env.cfg.PodsPerNode)
	r.CreateSeconds = time.Since(m.create).Seconds()
	if err != nil {
		return fmt.Errorf("create pods: %w", err)
	}
	logf("%d pods created in %.1f s", want, r.CreateSeconds)
	err = <-done
	r.PodsRunning, r.RunningProgress = running.count(), milestones(running.sorted(), want)
	if err != nil {
		return err
	}
	m.running = time.Now()
	r.RunningSeconds = m.running.Sub(m.create).Seconds()
	logf("all pods Running in %.1f s; busy window", r.RunningSeconds)
	r.Busy, err = settleAndMeasure(ctx, env.cfg, procs)
	return err
}

// settleAndMeasure waits cfg.Settle, then measures a window of the
// simulator's processes.
func settleAndMeasure(ctx context.Context, cfg Config, procs *procSet) (*Window, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(cfg.Settle):
	}
	w, err := measureWindow(ctx, procs.pids(), cfg.Window)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// countRequests counts the simulator's requests from the audit log into
// r: from start to all Ready, in the idle window, from the first pod's
// creation to all Running and in the busy window (each span measured).
func countRequests(auditLog, sim string, r *Result, m marks) error {
	spans := []span{{m.start, m.ready}, {}, {m.create, m.running}, {}}
	if r.Idle != nil {
		spans[1] = span{r.Idle.Start, r.Idle.End()}
	}
	if r.Busy != nil {
		spans[3] = span{r.Busy.Start, r.Busy.End()}
	}
	counts, err := countSpans(auditLog, sim, spans)
	if err != nil {
		return err
	}
	r.StartRequests, r.PodRequests = counts[0], counts[2]
	if r.Idle != nil {
		r.Idle.Requests = counts[1]
	}
	if r.Busy != nil {
		r.Busy.Requests = counts[3]
	}
	return nil
}

// harnessClient is the harness's own client, as the admin, with room for
// creating thousands of pods quickly.
func harnessClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.UserAgent = 500, 1000, "simbench"
	return kubernetes.NewForConfig(cfg)
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }
