package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// podMetrics are the pod worker and pod startup metrics.
type podMetrics struct {
	workerDuration   *prometheus.HistogramVec
	startDuration    prometheus.Histogram
	startSLI         prometheus.Histogram
	startTotal       prometheus.Histogram
	firstNetworkPod  prometheus.Gauge
	containersPerPod prometheus.Histogram
}

func newPodMetrics() podMetrics {
	const watchHelp = "measured from pod creation timestamp to when all its containers are reported as started and observed via watch"
	return podMetrics{
		workerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help:    alpha + "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation_type"}),
		startDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help:    alpha + "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
			Buckets: podStartupBuckets,
		}),
		startSLI: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_sli_duration_seconds",
			Help:    alpha + "Duration in seconds to start a pod, excluding time to pull images and run init containers, " + watchHelp,
			Buckets: podStartupBuckets,
		}),
		startTotal: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_total_duration_seconds",
			Help:    alpha + "Duration in seconds to start a pod since creation, including time to pull images and run init containers, " + watchHelp,
			Buckets: podStartupBuckets,
		}),
		firstNetworkPod: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "first_network_pod_start_sli_duration_seconds",
			Help: internal + "Duration in seconds to start the first network pod, excluding time to pull images and run init containers, " + watchHelp,
		}),
		containersPerPod: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "containers_per_pod_count",
			Help: alpha + "The number of containers per pod.", Buckets: prometheus.ExponentialBuckets(1, 2, 5),
		}),
	}
}

func (p *podMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.workerDuration, p.startDuration, p.startSLI, p.startTotal, p.firstNetworkPod, p.containersPerPod}
}

// ObservePodSync records how long a pod worker took to handle an update
// since it arrived. It is a podworker.Config ObserveSync function.
func (m *Metrics) ObservePodSync(operation string, d time.Duration) {
	m.pods.workerDuration.WithLabelValues(operation).Observe(d.Seconds())
}

// ObservePodsOnWatch records pods as berth's sources deliver them (for an
// API pod, as the watch shows it, status included) at when. static says
// which pods come from a file or URL: they count for the pod start
// duration but not for the startup SLI, as upstream.
func (m *Metrics) ObservePodsOnWatch(pods []*corev1.Pod, static func(*corev1.Pod) bool, when time.Time) {
	for _, pod := range pods {
		m.startup.observedOnWatch(pod, static(pod), when)
	}
}

// ObservePodStatus records a status berth generated for a pod.
func (m *Metrics) ObservePodStatus(uid types.UID, status *corev1.PodStatus) {
	m.startup.statusUpdated(uid, status)
}

// Forget drops what the pod startup tracker holds for a pod: the pod is
// gone (podgone.Owner).
func (m *Metrics) Forget(_ context.Context, uid types.UID) { m.startup.forget(uid) }

// HeldPods lists the pods the startup tracker holds state for
// (podgone.Holder): the tracker sees every pod the sources show, mirror
// pods too, which no pod worker runs, so no worker's end forgets them;
// housekeeping finds them once the API has them no more.
func (m *Metrics) HeldPods() []types.UID { return m.startup.held() }

// startupTracker follows each pod from the moment berth first sees it to
// the moment the watch shows it with every container started, and records
// upstream's pod startup latencies: the SLI (creation to watch-observed
// running, minus image pulls and init containers, for stateless
// schedulable pods), the total, and the time from first sight to Running.
//
// Concurrency: safe for use from any goroutine; mu guards pods and the
// fields below it.
type startupTracker struct {
	clock   clock.PassiveClock
	metrics *podMetrics

	mu   sync.Mutex
	pods map[types.UID]*podStartup
	// excluded are pods seen unschedulable: never tracked again.
	excluded map[types.UID]bool
	// firstNetworkSeen: the first non-host-network pod was recorded.
	firstNetworkSeen bool
}

// podStartup is what the tracker knows of one pod.
type podStartup struct {
	firstSeen time.Time
	// fresh: the pod had not started when berth first saw it (only then
	// is the pod start duration meaningful).
	fresh bool
	// sli: the pod is tracked for the SLI (seen before it started).
	sli   bool
	pulls []pullSession
	// initRuntime is the time the pod's init containers ran.
	initRuntime time.Duration
	// running is when berth first generated a status with every container
	// started; zero until then.
	running time.Time
	// startRecorded: the pod start duration was recorded; sliRecorded:
	// the SLI and total were.
	startRecorded, sliRecorded bool
	// stages are the moments of the pod's start that berth's stage split
	// reports (stages.go).
	stages stageTimes
}

type pullSession struct{ start, end time.Time }

func newStartupTracker(clk clock.PassiveClock, m *podMetrics) *startupTracker {
	return &startupTracker{clock: clk, metrics: m, pods: map[types.UID]*podStartup{}, excluded: map[types.UID]bool{}}
}
