package metrics

import (
	"strings"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// runtimeMetrics are the CRI call metrics.
type runtimeMetrics struct {
	ops, errors       *prometheus.CounterVec
	duration          *prometheus.HistogramVec
	startedPods       prometheus.Counter
	startedPodsErrors prometheus.Counter
	startedContainers *prometheus.CounterVec
}

func newRuntimeMetrics() runtimeMetrics {
	label := []string{"operation_type"}
	return runtimeMetrics{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_total",
			Help: alpha + "Cumulative number of runtime operations by operation type.",
		}, label),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help: alpha + "Cumulative number of runtime operation errors by operation type.",
		}, label),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help:    alpha + "Duration in seconds of runtime operations. Broken down by operation type.",
			Buckets: runtimeBuckets,
		}, label),
		startedPods: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "started_pods_total", Help: alpha + "Cumulative number of pods started",
		}),
		startedPodsErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "started_pods_errors_total", Help: alpha + "Cumulative number of errors when starting pods",
		}),
		startedContainers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "started_containers_total", Help: alpha + "Cumulative number of containers started",
		}, []string{"container_type"}),
	}
}

func (r *runtimeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.ops, r.errors, r.duration, r.startedPods, r.startedPodsErrors, r.startedContainers}
}

// ObserveCRI records one CRI call: its operation count, duration and error
// under upstream's operation_type, a sandbox or container start, and an
// image pull made for a pod (for the pod startup SLI). It is a
// cri.ObserveFunc.
func (m *Metrics) ObserveCRI(c cri.Call) {
	op := operationType(c.Method)
	m.runtime.ops.WithLabelValues(op).Inc()
	m.runtime.duration.WithLabelValues(op).Observe(c.Duration.Seconds())
	if c.Err != nil {
		m.runtime.errors.WithLabelValues(op).Inc()
	}
	switch req := c.Request.(type) {
	case *runtimeapi.RunPodSandboxRequest:
		m.runtime.startedPods.Inc()
		m.stages.runPodSandbox.WithLabelValues(req.GetRuntimeHandler()).Observe(c.Duration.Seconds())
		if c.Err != nil {
			m.runtime.startedPodsErrors.Inc()
			m.stages.runPodSandboxErrors.WithLabelValues(req.GetRuntimeHandler()).Inc()
			break
		}
		if uid := req.GetConfig().GetMetadata().GetUid(); uid != "" {
			m.startup.sandboxReady(types.UID(uid), c.Start.Add(c.Duration))
		}
	case *runtimeapi.CreateContainerRequest:
		m.runtime.startedContainers.WithLabelValues(containerType(req.GetConfig().GetAnnotations())).Inc()
	case *runtimeapi.PullImageRequest:
		if uid := req.GetSandboxConfig().GetMetadata().GetUid(); uid != "" {
			m.startup.imagePulled(types.UID(uid), c.Start, c.Start.Add(c.Duration))
		}
	}
}

// operations maps CRI methods to upstream's operation_type values where
// they are not simply the method name in snake case.
var operations = map[string]string{
	"RunPodSandbox":            "run_podsandbox",
	"StopPodSandbox":           "stop_podsandbox",
	"RemovePodSandbox":         "remove_podsandbox",
	"PodSandboxStatus":         "podsandbox_status",
	"ListPodSandbox":           "list_podsandbox",
	"PodSandboxStats":          "podsandbox_stats",
	"ListPodSandboxStats":      "list_podsandbox_stats",
	"ListPodSandboxMetrics":    "list_podsandbox_metrics",
	"UpdateContainerResources": "update_container",
}

// operationType returns upstream's operation_type label of a CRI method:
// "ContainerStatus" is "container_status", "RunPodSandbox" is
// "run_podsandbox". It is pure.
func operationType(method string) string {
	if op, ok := operations[method]; ok {
		return op
	}
	var b strings.Builder
	for i, r := range method {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// containerType is upstream's container_type label for a container berth
// creates, from the type annotation berth writes.
func containerType(annotations map[string]string) string {
	if annotations["io.kubernetes.container.type"] == "init" {
		return "init_container"
	}
	return "container"
}
