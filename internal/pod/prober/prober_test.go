package prober

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// statuses is an in-test StatusReader.
type statuses struct {
	mu sync.Mutex
	m  map[types.UID]corev1.PodStatus
}

func (s *statuses) Get(uid types.UID) (corev1.PodStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[uid]
	return st, ok
}

func (s *statuses) set(uid types.UID, st corev1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[uid] = st
}

// call is one probe run the fake handler was asked for; the test answers
// on reply.
type call struct {
	typ         ProbeType
	containerID string
	podIP       string
	reply       chan Result
}

type harness struct {
	t        *testing.T
	clock    *clocktesting.FakeClock
	statuses *statuses
	calls    chan call
	p        *Prober
	reg      *prometheus.Registry
}

func newHarness(t *testing.T) *harness {
	h := &harness{
		t: t, clock: clocktesting.NewFakeClock(t0), statuses: &statuses{m: map[types.UID]corev1.PodStatus{}},
		calls: make(chan call), reg: prometheus.NewRegistry(),
	}
	p, err := newProber(Config{Statuses: h.statuses, Clock: h.clock, Registerer: h.reg, Rand: func() float64 { return 0 }},
		func(ctx context.Context, typ ProbeType, _ *corev1.Probe, tg target) (Result, error) {
			c := call{typ: typ, containerID: tg.containerID, podIP: tg.podIP, reply: make(chan Result)}
			select {
			case h.calls <- c:
			case <-ctx.Done():
				return Unknown, ctx.Err()
			}
			select {
			case r := <-c.reply:
				return r, nil
			case <-ctx.Done():
				return Unknown, ctx.Err()
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	// Past the first period: no start-up jitter.
	h.clock.Step(time.Minute)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

// expectCall waits for the next probe run and checks its type and target.
func (h *harness) expectCall(typ ProbeType, containerID string) call {
	h.t.Helper()
	select {
	case c := <-h.calls:
		if c.typ != typ || c.containerID != containerID {
			h.t.Fatalf("probe call %v on %q, want %v on %q", c.typ, c.containerID, typ, containerID)
		}
		return c
	case <-time.After(10 * time.Second):
		h.t.Fatalf("no %v probe call on %q", typ, containerID)
	}
	return call{}
}

// waitSnapshot waits for result updates until the pod's snapshot is want.
func (h *harness) waitSnapshot(pod *corev1.Pod, rt *runtimestate.Pod, want Snapshot) {
	h.t.Helper()
	for {
		got := h.p.Snapshot(pod, rt)
		if cmp.Diff(want, got) == "" {
			return
		}
		select {
		case <-h.p.Updates():
		case <-time.After(10 * time.Second):
			h.t.Fatalf("snapshot never became what was wanted (-want +got):\n%s", cmp.Diff(want, got))
		}
	}
}

func probePod(c corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, RestartPolicy: corev1.RestartPolicyAlways},
	}
}

func runningStatus(id string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.0.7", ContainerStatuses: []corev1.ContainerStatus{*running(id, t0)}}
}

// rtWith is a runtime view whose newest "c" instance is id. Its state is
// Created, so that a Snapshot does not trigger readiness probes (see
// TestReadinessTriggeredWhileNotReady); results only depend on the ID.
func rtWith(id string) *runtimestate.Pod {
	return &runtimestate.Pod{UID: "uid-1", Containers: []runtimestate.Container{{ID: id, Name: "c", State: runtimestate.ContainerCreated}}}
}

func TestReadinessTriggeredWhileNotReady(t *testing.T) {
	h := newHarness(t)
	pod := probePod(corev1.Container{Name: "c", ReadinessProbe: &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 60, FailureThreshold: 1}})
	h.statuses.set(pod.UID, runningStatus("a"))
	h.p.AddPod(pod)
	h.expectCall(Readiness, "a").reply <- Failure
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": false}})

	// The status of a running, unready container is generated: the probe
	// runs now, not a period later (no clock step).
	running := rtWith("a")
	running.Containers[0].State = runtimestate.ContainerRunning
	h.p.Snapshot(pod, running)
	h.expectCall(Readiness, "a").reply <- Success
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": true}})
}

func exec() corev1.ProbeHandler {
	return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}
}

func TestReadinessFlips(t *testing.T) {
	h := newHarness(t)
	pod := probePod(corev1.Container{Name: "c", ReadinessProbe: &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 2, FailureThreshold: 1}})
	h.statuses.set(pod.UID, runningStatus("a"))
	h.waitSnapshot(pod, rtWith("a"), Snapshot{})
	h.p.AddPod(pod)
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": false}})

	c := h.expectCall(Readiness, "a")
	if c.podIP != "10.1.0.7" {
		t.Errorf("pod IP %q", c.podIP)
	}
	c.reply <- Success
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": true}})

	h.clock.Step(2 * time.Second)
	h.expectCall(Readiness, "a").reply <- Failure
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": false}})

	h.clock.Step(2 * time.Second)
	h.expectCall(Readiness, "a").reply <- Success
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Readiness: map[string]bool{"c": true}})
	// A newer instance is not ready until it is probed.
	if got := h.p.Snapshot(pod, rtWith("b")); !cmp.Equal(got, Snapshot{Readiness: map[string]bool{"c": false}}) {
		t.Errorf("snapshot for a new instance: %+v", got)
	}

	labels := prometheus.Labels{"probe_type": "Readiness", "container": "c", "pod": "web", "namespace": "ns", "pod_uid": "uid-1"}
	for result, want := range map[string]float64{"successful": 2, "failed": 1} {
		labels["result"] = result
		var m dto.Metric
		if err := h.p.metrics.total.With(labels).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("prober_probe_total{result=%q} = %v, want %v", result, got, want)
		}
	}

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(h.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/probes", nil))
	for _, want := range []string{
		`prober_probe_total{container="c",namespace="ns",pod="web",pod_uid="uid-1",probe_type="Readiness",result="successful"} 2`,
		`prober_probe_total{container="c",namespace="ns",pod="web",pod_uid="uid-1",probe_type="Readiness",result="failed"} 1`,
		`prober_probe_duration_seconds_count{container="c",namespace="ns",pod="web",probe_type="Readiness"} 2`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics/probes lacks %q:\n%s", want, rec.Body.String())
		}
	}

	h.p.RemovePod(pod.UID)
	if got := h.p.Snapshot(pod, rtWith("a")); !cmp.Equal(got, Snapshot{}) {
		t.Errorf("snapshot after RemovePod: %+v", got)
	}
}

func TestLivenessFailureHoldsUntilNewInstance(t *testing.T) {
	h := newHarness(t)
	pod := probePod(corev1.Container{Name: "c", LivenessProbe: &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 1, FailureThreshold: 2}})
	h.statuses.set(pod.UID, runningStatus("a"))
	h.p.AddPod(pod)

	h.expectCall(Liveness, "a").reply <- Failure
	h.clock.Step(time.Second)
	h.expectCall(Liveness, "a").reply <- Failure
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Plan: podplan.ProbeSnapshot{LivenessFailed: map[string]bool{"a": true}}})

	// On hold: ticks run no probe until the container is replaced.
	h.clock.Step(time.Second)
	h.statuses.set(pod.UID, runningStatus("b"))
	h.clock.Step(time.Second)
	h.expectCall(Liveness, "b").reply <- Success
	h.waitSnapshot(pod, rtWith("b"), Snapshot{})
}

func TestStartupHoldsLiveness(t *testing.T) {
	h := newHarness(t)
	pod := probePod(corev1.Container{
		Name:          "c",
		StartupProbe:  &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 1, FailureThreshold: 5},
		LivenessProbe: &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 1, FailureThreshold: 1},
	})
	h.statuses.set(pod.UID, runningStatus("a"))
	h.p.AddPod(pod)

	// Only the startup probe runs while the container has not started.
	for range 3 {
		h.expectCall(Startup, "a").reply <- Failure
		h.clock.Step(time.Second)
	}
	h.waitSnapshot(pod, rtWith("a"), Snapshot{Startup: map[string]bool{"c": false}})
	h.expectCall(Startup, "a").reply <- Success
	h.waitSnapshot(pod, rtWith("a"), Snapshot{
		Plan: podplan.ProbeSnapshot{Started: map[string]bool{"a": true}}, Startup: map[string]bool{"c": true},
	})

	// Started: liveness runs, startup probing is over for this instance.
	h.clock.Step(time.Second)
	h.expectCall(Liveness, "a").reply <- Failure
	h.waitSnapshot(pod, rtWith("a"), Snapshot{
		Plan:    podplan.ProbeSnapshot{Started: map[string]bool{"a": true}, LivenessFailed: map[string]bool{"a": true}},
		Startup: map[string]bool{"c": true},
	})

	// Terminating: liveness and startup stop, verdicts go.
	h.p.StopLivenessAndStartup(pod.UID)
	h.waitSnapshot(pod, rtWith("a"), Snapshot{})
}

func TestStartupFailure(t *testing.T) {
	h := newHarness(t)
	pod := probePod(corev1.Container{Name: "c", StartupProbe: &corev1.Probe{ProbeHandler: exec(), PeriodSeconds: 1, FailureThreshold: 1}})
	h.statuses.set(pod.UID, runningStatus("a"))
	h.p.AddPod(pod)
	h.expectCall(Startup, "a").reply <- Failure
	h.waitSnapshot(pod, rtWith("a"), Snapshot{
		Plan: podplan.ProbeSnapshot{StartupFailed: map[string]bool{"a": true}}, Startup: map[string]bool{"c": false},
	})
}

func TestSidecarsAreProbed(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := probePod(corev1.Container{Name: "main"})
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "init", ReadinessProbe: &corev1.Probe{ProbeHandler: exec()}},
		{Name: "side", RestartPolicy: &always, StartupProbe: &corev1.Probe{ProbeHandler: exec()}},
	}
	var names []string
	for _, c := range probedContainers(pod) {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"side", "main"}, names); diff != "" {
		t.Errorf("probed containers (-want +got):\n%s", diff)
	}
	if !hasProbes(pod) {
		t.Error("hasProbes: false for a sidecar with a startup probe")
	}
	pod.Spec.InitContainers = pod.Spec.InitContainers[:1]
	if hasProbes(pod) {
		t.Error("hasProbes: true for probes on a regular init container only")
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New with an empty config: no error")
	}
	reg := prometheus.NewRegistry()
	cfg := Config{Statuses: &statuses{}, Runtime: &fakeExec{}, Recorder: &recorder{}, Clock: clocktesting.NewFakeClock(t0), Registerer: reg}
	if _, err := New(cfg); err == nil {
		t.Error("New without a Kubernetes version: no error")
	}
	cfg.KubernetesVersion = "v1.37.2"
	if _, err := New(cfg); err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := New(cfg); err == nil {
		t.Error("second registration into the same registry: no error")
	}
}

// recorder records events as strings.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) ContainerEventf(_ *corev1.Pod, container, eventType, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", container, eventType, reason, fmt.Sprintf(format, args...)))
}
