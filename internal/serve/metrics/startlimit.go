package metrics

import "github.com/prometheus/client_golang/prometheus"

// newStartLimit is berth_pod_start_limit: how many new pods the runtime
// manager lets start at once (internal/pod/kuberuntime's start pace, which
// moves it with the runtime's latency). Upstream paces nothing and has no
// such metric: it is berth's.
func newStartLimit() prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "berth", Name: "pod_start_limit",
		Help: "How many new pods (a sandbox and its first containers) may start at once; " +
			"it grows while the runtime's sandbox and container start latencies hold and shrinks when they climb.",
	})
}

// ObservePodStartLimit sets the limit of new pod starts. It is a
// kuberuntime Observers.StartLimit function.
func (m *Metrics) ObservePodStartLimit(limit int) { m.startLimit.Set(float64(limit)) }
