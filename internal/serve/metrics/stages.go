package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Upstream's names of the metrics that measure a stage of a pod's start,
// pinned by TestStageNamesMatchUpstream.
const (
	podWorkerStartName      = "pod_worker_start_duration_seconds"
	podStatusSyncName       = "pod_status_sync_duration_seconds"
	runPodSandboxName       = "run_podsandbox_duration_seconds"
	runPodSandboxErrorsName = "run_podsandbox_errors_total"
)

// podStatusSyncBuckets are upstream's PodStatusSyncDuration buckets.
var podStatusSyncBuckets = []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}

// stageBuckets resolve the short stages of a pod start: 5 ms to 41 s.
var stageBuckets = prometheus.ExponentialBuckets(0.005, 2, 14)

// The stages of berth_pod_start_stage_duration_seconds: those of a pod's
// start that upstream has no metric for. From the first sync's start to
// the pod sandbox ready (volumes, sandbox config, RunPodSandbox); from
// the sandbox ready to the last container started (by the runtime's
// clock: image check, CreateContainer, StartContainer); from then to the
// status cache holding the pod with every container running (the PLEG
// relist, the sync that follows, the status generation).
const (
	stageSandbox        = "sandbox"
	stageContainers     = "containers"
	stageRuntimeToCache = "runtime_to_cache"
)

// stageMetrics are the metrics of the stages of a pod's start: upstream's
// where upstream has one, berth's own for the rest.
type stageMetrics struct {
	workerStart         prometheus.Histogram
	statusSync          prometheus.Histogram
	runPodSandbox       *prometheus.HistogramVec
	runPodSandboxErrors *prometheus.CounterVec
	podStart            *prometheus.HistogramVec
}

func newStageMetrics() stageMetrics {
	handler := []string{"runtime_handler"}
	return stageMetrics{
		workerStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: podWorkerStartName,
			Help: alpha + "Duration in seconds from kubelet seeing a pod to starting a worker.", Buckets: prometheus.DefBuckets,
		}),
		statusSync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: podStatusSyncName,
			Help: alpha + "Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status " +
				"until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.",
			Buckets: podStatusSyncBuckets,
		}),
		runPodSandbox: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: runPodSandboxName,
			Help:    alpha + "Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.",
			Buckets: prometheus.DefBuckets,
		}, handler),
		runPodSandboxErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: runPodSandboxErrorsName,
			Help: alpha + "Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.",
		}, handler),
		podStart: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "berth", Name: "pod_start_stage_duration_seconds",
			Help: "Duration in seconds of one stage of a new pod's start, per pod: sandbox (first sync start to pod sandbox ready), " +
				"containers (sandbox ready to the last container started, by the runtime's clock), runtime_to_cache " +
				"(last container started to the status cache holding every container running).",
			Buckets: stageBuckets,
		}, []string{"stage"}),
	}
}

func (s *stageMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.workerStart, s.statusSync, s.runPodSandbox, s.runPodSandboxErrors, s.podStart}
}

// stageTimes are the moments of one pod's start; zero until seen.
type stageTimes struct {
	workerStart, sandboxReady, containersStarted time.Time
	// recorded: the stages were observed and logged.
	recorded bool
}

// ObservePodWorkerStart records a created pod's worker starting its first
// sync at now, berth having first seen the pod at firstSeen. It is a
// podworker.Config ObserveStart function.
func (m *Metrics) ObservePodWorkerStart(uid types.UID, firstSeen, now time.Time) {
	m.stages.workerStart.Observe(now.Sub(firstSeen).Seconds())
	m.startup.mu.Lock()
	defer m.startup.mu.Unlock()
	if st := m.startup.pods[uid]; st != nil && st.stages.workerStart.IsZero() {
		st.stages.workerStart = now
	}
}

// ObservePodStatusWritten records a pod status that reached the API server
// at, whose oldest unwritten change was stored at since (upstream's pod
// status sync duration). The first written status with every container
// running completes the pod's start: its stages are observed, and logged
// with their moments (one "Pod start stages" line per pod, for the bench
// and for people).
func (m *Metrics) ObservePodStatusWritten(ctx context.Context, pod *corev1.Pod, status *corev1.PodStatus, since, at time.Time) {
	m.stages.statusSync.Observe(at.Sub(since).Seconds())
	if !allStarted(status) {
		return
	}
	t := m.startup
	t.mu.Lock()
	st := t.pods[pod.UID]
	if st == nil || st.stages.recorded || st.running.IsZero() || !st.fresh {
		t.mu.Unlock()
		return
	}
	st.stages.recorded = true
	firstSeen, cached, stages := st.firstSeen, st.running, st.stages
	t.mu.Unlock()
	for stage, d := range stageDurations(stages, cached) {
		m.stages.podStart.WithLabelValues(stage).Observe(d.Seconds())
	}
	klog.FromContext(ctx).Info("Pod start stages", "pod", klog.KObj(pod), "podUID", pod.UID,
		"firstSeen", stamp(firstSeen), "workerStart", stamp(stages.workerStart), "sandboxReady", stamp(stages.sandboxReady),
		"containersStarted", stamp(stages.containersStarted), "statusCached", stamp(cached), "statusPatched", stamp(at))
}

// stageDurations are the stages of a pod's start that berth's own
// histogram reports, from its moments and the time the status cache held
// it running; a stage with a moment missing or out of order is left out.
// It is pure.
func stageDurations(s stageTimes, cached time.Time) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, st := range []struct {
		name       string
		start, end time.Time
	}{
		{stageSandbox, s.workerStart, s.sandboxReady},
		{stageContainers, s.sandboxReady, s.containersStarted},
		{stageRuntimeToCache, s.containersStarted, cached},
	} {
		if !st.start.IsZero() && !st.end.IsZero() && !st.end.Before(st.start) {
			out[st.name] = st.end.Sub(st.start)
		}
	}
	return out
}

// sandboxReady records the end of a pod's first successful RunPodSandbox.
func (t *startupTracker) sandboxReady(uid types.UID, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.pods[uid]; st != nil && st.stages.sandboxReady.IsZero() {
		st.stages.sandboxReady = at
	}
}

// lastStarted is the latest start of the status's running containers.
func lastStarted(status *corev1.PodStatus) time.Time {
	var last time.Time
	for _, cs := range status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(last) {
			last = r.StartedAt.Time
		}
	}
	return last
}

// stamp formats a moment for the stage log line: RFC 3339 with
// nanoseconds in UTC, "" when unknown.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
