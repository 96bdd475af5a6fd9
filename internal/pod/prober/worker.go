package prober

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Run starts and stops the workers as pods are added and removed, until
// ctx ends; then it stops every worker and waits for them.
func (p *Prober) Run(ctx context.Context) error {
	running := map[key]context.CancelFunc{}
	var wg sync.WaitGroup
	defer func() {
		for _, cancel := range running {
			cancel()
		}
		wg.Wait()
	}()
	for {
		p.reconcile(ctx, running, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		}
	}
}

// reconcile starts a worker for every wanted probe without one and stops
// the workers no longer wanted. A worker that ended by itself (its pod
// finished) keeps its place until its pod is removed, so it is not
// restarted.
func (p *Prober) reconcile(ctx context.Context, running map[key]context.CancelFunc, wg *sync.WaitGroup) {
	want := p.wanted()
	for k, cancel := range running {
		if _, ok := want[k]; !ok {
			cancel()
			delete(running, k)
		}
	}
	for k, w := range want {
		if _, ok := running[k]; ok {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		running[k] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(wctx)
		}()
	}
}

// wanted returns a new worker for every probe that should run.
func (p *Prober) wanted() map[key]*worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[key]*worker{}
	for uid, e := range p.pods {
		for _, c := range probedContainers(e.pod) {
			for _, t := range []ProbeType{Liveness, Readiness, Startup} {
				spec := probeOf(c, t)
				if spec == nil || (e.stopped && t != Readiness) {
					continue
				}
				k := key{uid: uid, container: c.Name, typ: t}
				w := &worker{
					p: p, key: k, container: c.DeepCopy(), spec: spec,
					metrics: p.metrics.forWorker(k, e.pod.Name, e.pod.Namespace),
				}
				if t == Readiness {
					w.trigger = e.triggers[c.Name]
				}
				out[k] = w
			}
		}
	}
	return out
}

// worker probes one container of one pod with one probe. Its fields are
// owned by its goroutine.
type worker struct {
	p         *Prober
	key       key
	container *corev1.Container
	spec      *corev1.Probe
	metrics   workerMetrics
	// trigger asks for a probe now (readiness only; nil otherwise).
	trigger <-chan struct{}
	state   instance
}

// run probes on the probe's period until ctx ends or the probe is over.
func (w *worker) run(ctx context.Context) {
	defer w.metrics.delete()
	clk := w.p.cfg.Clock
	every := period(w.spec)
	// Right after berth starts every worker starts at once: spread them
	// over one period, as upstream.
	if clk.Since(w.p.start) < every {
		select {
		case <-ctx.Done():
			return
		case <-clk.After(time.Duration(w.p.cfg.Rand() * float64(every))):
		}
	}
	ticker := clk.NewTicker(every)
	defer ticker.Stop()
	for w.doProbe(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-w.trigger:
		}
	}
}

// doProbe runs one tick; it reports whether the worker goes on.
func (w *worker) doProbe(ctx context.Context) bool {
	clk := w.p.cfg.Clock
	start := clk.Now()
	pod, ok := w.p.current(w.key.uid)
	if !ok {
		return false
	}
	status, hasStatus := w.p.cfg.Statuses.Get(w.key.uid)
	obs := observation{
		HasStatus: hasStatus, Phase: status.Phase, Container: findStatus(&status, w.key.container),
		Deleting: pod.DeletionTimestamp != nil, Now: start,
	}
	obs.NoRestart = noRestart(pod, w.container, &status, obs.Container)
	if obs.Container != nil {
		obs.Started = w.p.started(w.key, runtimeID(obs.Container.ContainerID))
	}
	t := decide(w.key.typ, w.spec, w.state, obs)
	w.state = t.Instance
	if t.SetResult {
		w.p.setResult(ctx, w.key, w.state.ContainerID, t.Set)
	}
	if t.Stop || !t.Probe {
		return !t.Stop
	}
	tg := target{pod: pod, container: w.container, containerID: w.state.ContainerID, podIP: status.PodIP}
	r, err := w.p.probe(ctx, w.key.typ, w.spec, tg)
	if err != nil {
		if ctx.Err() == nil {
			klog.FromContext(ctx).V(1).Info("Probe errored, result discarded", "pod", klog.KObj(pod), "containerName", w.key.container, "probeType", w.key.typ, "err", err)
		}
		return true
	}
	w.metrics.observe(r, clk.Since(start).Seconds())
	st, verdict, ok := record(w.key.typ, w.spec, w.state, r)
	w.state = st
	if ok {
		w.p.setResult(ctx, w.key, w.state.ContainerID, verdict)
	}
	return true
}

// noRestart reports whether the container, as its status c shows it, has
// terminated for good (upstream's doProbe with ContainerRestartRules and
// RestartAllContainersOnContainerExits): its exit code does not restart it
// (podutil.ContainerShouldRestart: its rules, its restartPolicy, the pod's)
// and no RestartAllContainers restart is under way.
func noRestart(pod *corev1.Pod, spec *corev1.Container, status *corev1.PodStatus, c *corev1.ContainerStatus) bool {
	if c == nil || c.State.Terminated == nil {
		return false
	}
	return !podutil.ContainerShouldRestart(spec, &pod.Spec, c.State.Terminated.ExitCode) && !podutil.RestartingAll(status)
}
