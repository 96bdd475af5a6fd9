package prober

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/httpget"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// StatusReader reads the latest generated status of a pod
// (podstatus.Store).
type StatusReader interface {
	Get(uid types.UID) (corev1.PodStatus, bool)
}

// Config holds the prober's collaborators.
type Config struct {
	// Statuses gives each worker the container's current instance, state
	// and the pod IP.
	Statuses StatusReader
	// Runtime runs exec probes.
	Runtime  ExecRuntime
	Recorder Recorder
	Clock    clock.WithTicker
	// Registerer receives prober_probe_total and
	// prober_probe_duration_seconds.
	Registerer prometheus.Registerer
	// Rand returns a number in [0, 1) for the first-probe jitter; nil uses
	// math/rand/v2.
	Rand func() float64
	// KubernetesVersion is the version berth stands in for
	// (config.KubernetesVersion): HTTP and gRPC probes send
	// "kube-probe/<major>.<minor>" of it as their User-Agent.
	KubernetesVersion string
	// Handler, when set, answers every probe in place of the exec, HTTP,
	// TCP and gRPC handlers (berth simulate answers from its application
	// model); thresholds, retries, events and results are the prober's
	// as ever.
	Handler Handler
}

// Handler answers one run of a probe of a container instance: ok is the
// verdict, output what the Unhealthy event says of a failure; an error
// is no verdict (the run is retried, as a handler's error is).
type Handler func(ctx context.Context, t ProbeType, pod *corev1.Pod, container *corev1.Container, containerID string) (ok bool, output string, err error)

// key names one worker.
type key struct {
	uid       types.UID
	container string
	typ       ProbeType
}

// slot is a worker's place within its pod.
type slot struct {
	container string
	typ       ProbeType
}

// entry is the recorded result of a worker, for one container instance.
type entry struct {
	containerID string
	result      Result
}

// podEntry is a pod the prober was asked to probe.
type podEntry struct {
	pod *corev1.Pod
	// stopped: liveness and startup probing ended (the pod terminates).
	stopped bool
	// triggers wake each container's readiness worker for an immediate
	// probe (capacity 1), by container name.
	triggers map[string]chan struct{}
}

// Prober runs the probes of the pods it is given.
//
// Concurrency: AddPod, StopLivenessAndStartup, RemovePod and Snapshot are
// safe from any goroutine and never block on the workers. Run owns the
// worker goroutines; workers write results through setResult.
type Prober struct {
	cfg     Config
	probe   probeFunc
	metrics *metrics
	start   time.Time
	wake    chan struct{}
	updates chan types.UID
	// mu guards pods and results.
	mu      sync.Mutex
	pods    map[types.UID]*podEntry
	results map[types.UID]map[slot]entry
}

// New validates cfg and returns a prober; it starts nothing.
func New(cfg Config) (*Prober, error) {
	if cfg.Statuses == nil || cfg.Runtime == nil || cfg.Recorder == nil || cfg.Clock == nil || cfg.Registerer == nil {
		return nil, errors.New("prober: Statuses, Runtime, Recorder, Clock and Registerer are required")
	}
	userAgent, err := httpget.UserAgent(httpget.Probe, cfg.KubernetesVersion)
	if err != nil {
		return nil, fmt.Errorf("prober: %w", err)
	}
	r := newRunner(cfg.Runtime, cfg.Recorder, userAgent)
	r.handler = cfg.Handler
	return newProber(cfg, r.probe)
}

func newProber(cfg Config, probe probeFunc) (*Prober, error) {
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Prober{
		cfg: cfg, probe: probe, metrics: m, start: cfg.Clock.Now(),
		wake: make(chan struct{}, 1), updates: make(chan types.UID, 64),
		pods: map[types.UID]*podEntry{}, results: map[types.UID]map[slot]entry{},
	}, nil
}

// Updates receives the UID of a pod whenever one of its probe results
// changes; the sync loop syncs that pod. Give it one reader.
func (p *Prober) Updates() <-chan types.UID { return p.updates }

// AddPod starts probing the pod's containers (regular and restartable
// init containers) or, when already known, takes the newer pod object.
func (p *Prober) AddPod(pod *corev1.Pod) {
	if !hasProbes(pod) {
		return
	}
	p.mu.Lock()
	e, known := p.pods[pod.UID]
	if known {
		e.pod = pod
	} else {
		triggers := map[string]chan struct{}{}
		for _, c := range probedContainers(pod) {
			triggers[c.Name] = make(chan struct{}, 1)
		}
		p.pods[pod.UID] = &podEntry{pod: pod, triggers: triggers}
	}
	p.mu.Unlock()
	if !known {
		p.kick()
	}
}

// StopLivenessAndStartup ends the pod's liveness and startup probes: a
// terminating pod is not restarted; readiness goes on.
func (p *Prober) StopLivenessAndStartup(uid types.UID) {
	p.mu.Lock()
	e, ok := p.pods[uid]
	if ok && !e.stopped {
		e.stopped = true
		for s := range p.results[uid] {
			if s.typ != Readiness {
				delete(p.results[uid], s)
			}
		}
	}
	p.mu.Unlock()
	if ok {
		p.kick()
	}
}

// Forget ends every probe of a pod that is gone and forgets its results
// (podgone.Owner): RemovePod.
func (p *Prober) Forget(_ context.Context, uid types.UID) { p.RemovePod(uid) }

// RemovePod ends every probe of the pod and forgets its results: the pod
// terminated (podsync), or is gone (Forget).
func (p *Prober) RemovePod(uid types.UID) {
	p.mu.Lock()
	_, ok := p.pods[uid]
	delete(p.pods, uid)
	delete(p.results, uid)
	p.mu.Unlock()
	if ok {
		p.kick()
	}
}

// trigger signals ch without blocking.
func trigger(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (p *Prober) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Snapshot is what the pod syncer needs of the prober for one sync.
type Snapshot struct {
	// Plan holds the verdicts by runtime container ID for the planner.
	Plan podplan.ProbeSnapshot
	// Readiness and Startup hold the results of the current instances by
	// container name (podstatus.Input): a name is absent when the container
	// has no such probe (or, for startup, when startup probing stopped).
	Readiness map[string]bool
	Startup   map[string]bool
}

// Snapshot returns the pod's probe results; rt gives each container's
// current (newest) instance. As upstream, a running container that is not
// ready has its readiness probe run at once rather than at its next period.
func (p *Prober) Snapshot(pod *corev1.Pod, rt *runtimestate.Pod) Snapshot {
	var s Snapshot
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[pod.UID]
	if !ok {
		return s
	}
	results := p.results[pod.UID]
	for _, c := range probedContainers(e.pod) {
		id, running := "", false
		if latest := rt.LatestContainer(c.Name); latest != nil {
			id, running = latest.ID, latest.State == runtimestate.ContainerRunning
		}
		if c.ReadinessProbe != nil {
			ready := results[slot{c.Name, Readiness}] == entry{id, Success}
			setName(&s.Readiness, c.Name, ready)
			if running && !ready {
				trigger(e.triggers[c.Name])
			}
		}
		if c.StartupProbe != nil && !e.stopped {
			setName(&s.Startup, c.Name, results[slot{c.Name, Startup}] == entry{id, Success})
		}
	}
	for sl, r := range results {
		switch {
		case sl.typ == Liveness && r.result == Failure:
			setName(&s.Plan.LivenessFailed, r.containerID, true)
		case sl.typ == Startup && r.result == Failure:
			setName(&s.Plan.StartupFailed, r.containerID, true)
		case sl.typ == Startup && r.result == Success:
			setName(&s.Plan.Started, r.containerID, true)
		}
	}
	return s
}

func setName(m *map[string]bool, k string, v bool) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[k] = v
}

// setResult records a worker's result for an instance and announces a
// change. Results of workers whose pod or probe type was removed are
// dropped.
func (p *Prober) setResult(ctx context.Context, k key, containerID string, r Result) {
	p.mu.Lock()
	e, ok := p.pods[k.uid]
	if !ok || (e.stopped && k.typ != Readiness) {
		p.mu.Unlock()
		return
	}
	sl, want := slot{k.container, k.typ}, entry{containerID, r}
	changed := p.results[k.uid][sl] != want
	if changed {
		if p.results[k.uid] == nil {
			p.results[k.uid] = map[slot]entry{}
		}
		p.results[k.uid][sl] = want
	}
	p.mu.Unlock()
	if !changed {
		return
	}
	select {
	case p.updates <- k.uid:
	case <-ctx.Done():
	}
}

// started reports whether the instance passed its startup probe, or the
// container has no (running) startup probe.
func (p *Prober) started(k key, containerID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[k.uid]
	if !ok || e.stopped {
		return true
	}
	c := findContainer(e.pod, k.container)
	if c == nil || c.StartupProbe == nil {
		return true
	}
	return p.results[k.uid][slot{k.container, Startup}] == entry{containerID, Success}
}

// current returns the pod object last given for the worker's pod.
func (p *Prober) current(uid types.UID) (*corev1.Pod, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.pods[uid]
	if !ok {
		return nil, false
	}
	return e.pod, true
}

// hasProbes reports whether any probed container has a probe.
func hasProbes(pod *corev1.Pod) bool {
	for _, c := range probedContainers(pod) {
		if c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil {
			return true
		}
	}
	return false
}

// probedContainers are the containers probes run in: restartable init
// containers (sidecars), then regular containers.
func probedContainers(pod *corev1.Pod) []*corev1.Container {
	var out []*corev1.Container
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podutil.IsSidecar(c) {
			out = append(out, c)
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, c := range probedContainers(pod) {
		if c.Name == name {
			return c
		}
	}
	return nil
}
