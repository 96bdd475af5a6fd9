package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
)

// Upstream's keys of the in-place pod resize metrics (pkg/kubelet/metrics
// ContainerRequestedResizesKey and the others), pinned by
// TestResizeMetricsMatchUpstream.
const (
	containerRequestedResizesName  = "container_requested_resizes_total"
	podResizeDurationName          = "pod_resize_duration_milliseconds"
	podPendingResizesName          = "pod_pending_resizes"
	podInfeasibleResizesName       = "pod_infeasible_resizes_total"
	podInProgressResizesName       = "pod_in_progress_resizes"
	podDeferredAcceptedResizesName = "pod_deferred_accepted_resizes_total"
	podDeferredResizeDurationName  = "pod_deferred_resize_duration_seconds"
)

// The priority_bucket label values (upstream's PriorityBucket*), pinned
// with priorityBucket by TestPriorityBucketMatchesUpstream.
const (
	priorityBucketSystemCritical = "system-critical"
	priorityBucketHigh           = "high"
	priorityBucketMedium         = "medium"
	priorityBucketNormal         = "normal"
	priorityBucketLow            = "low"
	priorityBucketVeryLow        = "very-low"
	priorityBucketUnknown        = "unknown"
)

// Upstream's thresholds of the priority buckets: scheduling's
// SystemCriticalPriority, and GetPriorityBucketLabel's own.
const (
	systemCriticalPriority = 2 * 1000000000
	highPriority           = 100000
	veryLowPriority        = -1000
)

var (
	// podResizeBuckets are upstream's podResizeDurationBuckets.
	podResizeBuckets = []float64{10, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000}
	// podDeferredResizeBuckets are upstream's
	// podDeferredResizeDurationBuckets.
	podDeferredResizeBuckets = []float64{5, 10, 15, 20, 30, 45, 60, 90, 120, 150, 180, 300, 600, 1200, 1800, 3600}
)

// The help of the two metrics labelled by priority bucket, as upstream's.
const (
	priorityBucketHelp = "Label 'priority_bucket' classifies the pod priority (system-critical: >=2000000000, high: 100000..1999999999, medium: 1..99999, normal: 0/default, low: -999..-1, very-low: <=-1000, unknown: nil pod)."
	pendingHelp        = "Number of pending resizes for pods. " + priorityBucketHelp + " Label 'reason' describes the state (deferred, infeasible)."
	deferredHelp       = "Duration in seconds that a pod resize remains deferred before completion. " + priorityBucketHelp +
		" Label 'resolution' describes how the deferred resize was resolved (accepted, reverted, terminated)."
	requestedHelp = "Number of requested resizes, counted at the container level. Different resources on the same container are counted separately. The 'requirement' label refers to 'memory' or 'limits'; the 'operation' label can be one of 'add', 'remove', 'increase' or 'decrease'."
)

// resizeMetrics are upstream's in-place pod resize metrics
// (InPlacePodVerticalScaling, GA and locked on: always registered).
type resizeMetrics struct {
	requested        *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	pending          *prometheus.GaugeVec
	infeasible       *prometheus.CounterVec
	inProgress       prometheus.Gauge
	deferredAccepted *prometheus.CounterVec
	deferredDuration *prometheus.HistogramVec
}

func newResizeMetrics() resizeMetrics {
	return resizeMetrics{
		requested: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: containerRequestedResizesName, Help: alpha + requestedHelp,
		}, []string{"resource", "requirement", "operation"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: podResizeDurationName, Help: alpha + "Duration in milliseconds to actuate a pod resize",
			Buckets: podResizeBuckets,
		}, []string{"success"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: podPendingResizesName, Help: alpha + pendingHelp,
		}, []string{"reason", "priority_bucket"}),
		infeasible: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: podInfeasibleResizesName, Help: alpha + "Number of infeasible resizes for pods.",
		}, []string{"reason_detail"}),
		inProgress: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: podInProgressResizesName, Help: alpha + "Number of in-progress resizes for pods.",
		}),
		deferredAccepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: podDeferredAcceptedResizesName,
			Help: alpha + "Cumulative number of resizes that were accepted after being deferred.",
		}, []string{"retry_trigger"}),
		deferredDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: podDeferredResizeDurationName, Help: alpha + deferredHelp,
			Buckets: podDeferredResizeBuckets,
		}, []string{"resolution", "priority_bucket"}),
	}
}

func (r *resizeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.requested, r.duration, r.pending, r.infeasible, r.inProgress, r.deferredAccepted, r.deferredDuration}
}

// priorityBucket is upstream's GetPriorityBucketLabel: the
// priority_bucket of a pod, "unknown" for none.
func priorityBucket(pod *corev1.Pod) string {
	if pod == nil {
		return priorityBucketUnknown
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority == 0 {
		return priorityBucketNormal
	}
	switch p := *pod.Spec.Priority; {
	case p >= systemCriticalPriority:
		return priorityBucketSystemCritical
	case p >= highPriority:
		return priorityBucketHigh
	case p > 0:
		return priorityBucketMedium
	case p > veryLowPriority:
		return priorityBucketLow
	default:
		return priorityBucketVeryLow
	}
}

// ObserveRequestedResize counts one change an update asks of a
// container's resources (kubelet_container_requested_resizes_total):
// resource cpu or memory, requirement requests or limits, operation add,
// remove, increase or decrease.
func (m *Metrics) ObserveRequestedResize(resource, requirement, operation string) {
	m.resize.requested.WithLabelValues(resource, requirement, operation).Inc()
}

// ObservePodResize records one actuation of a pod resize, whether it
// succeeded and how long it took, in whole milliseconds as upstream
// (kubelet_pod_resize_duration_milliseconds).
func (m *Metrics) ObservePodResize(success bool, took time.Duration) {
	m.resize.duration.WithLabelValues(strconv.FormatBool(success)).Observe(float64(took.Milliseconds()))
}

// SetPendingResizes sets kubelet_pod_pending_resizes to the pods with a
// PodResizePending condition, each with the condition's reason (Deferred
// or Infeasible, lower-cased as upstream's label) and counted in its
// priority bucket. Series no longer pending drop out.
func (m *Metrics) SetPendingResizes(reasons map[*corev1.Pod]string) {
	type key struct{ reason, bucket string }
	counts := make(map[key]int, len(reasons))
	for pod, reason := range reasons {
		counts[key{strings.ToLower(reason), priorityBucket(pod)}]++
	}
	m.resize.pending.Reset()
	for k, n := range counts {
		m.resize.pending.WithLabelValues(k.reason, k.bucket).Set(float64(n))
	}
}

// SetInProgressResizes sets kubelet_pod_in_progress_resizes: the number
// of pods with a PodResizeInProgress condition.
func (m *Metrics) SetInProgressResizes(n int) {
	m.resize.inProgress.Set(float64(n))
}

// ObserveInfeasibleResize counts one resize found infeasible, for
// upstream's reason_detail (kubelet_pod_infeasible_resizes_total).
func (m *Metrics) ObserveInfeasibleResize(detail string) {
	m.resize.infeasible.WithLabelValues(detail).Inc()
}

// ObserveDeferredAcceptedResize counts one deferred resize admitted by a
// retry, for the retry's trigger
// (kubelet_pod_deferred_accepted_resizes_total).
func (m *Metrics) ObserveDeferredAcceptedResize(trigger string) {
	m.resize.deferredAccepted.WithLabelValues(trigger).Inc()
}

// ObserveDeferredResize records how long a pod's resize stayed Deferred
// before it was resolved (accepted, reverted or terminated), in the pod's
// priority bucket; pod is nil once the pod is gone ("unknown"), as
// upstream (kubelet_pod_deferred_resize_duration_seconds).
func (m *Metrics) ObserveDeferredResize(resolution string, pod *corev1.Pod, waited time.Duration) {
	m.resize.deferredDuration.WithLabelValues(resolution, priorityBucket(pod)).Observe(waited.Seconds())
}
