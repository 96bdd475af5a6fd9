package prober

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric label values of prober_probe_total's result, as upstream.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
	resultUnknown    = "unknown"
)

// metrics are upstream's prober metrics, served on /metrics/probes.
type metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "prober",
			Name:      "probe_total",
			Help:      "[ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result.",
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "prober",
			Name:      "probe_duration_seconds",
			Help:      "[ALPHA] Duration in seconds for a probe response.",
			Buckets:   prometheus.DefBuckets,
		}, []string{"probe_type", "container", "pod", "namespace"}),
	}
	for _, c := range []prometheus.Collector{m.total, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register prober metrics: %w", err)
		}
	}
	return m, nil
}

// workerMetrics are one worker's series.
type workerMetrics struct {
	m        *metrics
	total    prometheus.Labels // without "result"
	duration prometheus.Labels
}

func (m *metrics) forWorker(k key, name, namespace string) workerMetrics {
	return workerMetrics{
		m: m,
		total: prometheus.Labels{
			"probe_type": k.typ.String(), "container": k.container, "pod": name, "namespace": namespace, "pod_uid": string(k.uid),
		},
		duration: prometheus.Labels{"probe_type": k.typ.String(), "container": k.container, "pod": name, "namespace": namespace},
	}
}

func (w workerMetrics) withResult(r string) prometheus.Labels {
	l := prometheus.Labels{"result": r}
	for k, v := range w.total {
		l[k] = v
	}
	return l
}

// observe counts one probe run; the duration is recorded for successes and
// unknown results, as upstream.
func (w workerMetrics) observe(r Result, seconds float64) {
	switch r {
	case Success:
		w.m.total.With(w.withResult(resultSuccessful)).Inc()
		w.m.duration.With(w.duration).Observe(seconds)
	case Failure:
		w.m.total.With(w.withResult(resultFailed)).Inc()
	default:
		w.m.total.With(w.withResult(resultUnknown)).Inc()
		w.m.duration.With(w.duration).Observe(seconds)
	}
}

// delete drops the worker's series when it stops.
func (w workerMetrics) delete() {
	for _, r := range []string{resultSuccessful, resultFailed, resultUnknown} {
		w.m.total.Delete(w.withResult(r))
	}
	w.m.duration.Delete(w.duration)
}
