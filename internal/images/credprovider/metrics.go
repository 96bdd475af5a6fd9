package credprovider

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// alpha is the help prefix component-base gives upstream's alpha metrics.
const alpha = "[ALPHA] "

// metrics are upstream's credential provider metrics (its plugin
// metrics.go), registered into the registry Config gives. A nil *metrics
// records nothing. The collectors are safe for concurrent use.
type metrics struct {
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the plugin metrics and the config info (its hash)
// into reg; a nil reg gives nil.
func newMetrics(reg prometheus.Registerer, configHash string) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "credential_provider_plugin_errors_total",
			Help: alpha + "Number of errors from credential provider plugin",
		}, []string{"plugin_name"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "credential_provider_plugin_duration",
			Help: alpha + "Duration of execution in seconds for credential provider plugin", Buckets: prometheus.DefBuckets,
		}, []string{"plugin_name"}),
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "kubelet", Name: "credential_provider_config_info",
		Help: alpha + "Information about the last applied credential provider configuration with hash as label",
	}, []string{"hash"})
	info.WithLabelValues(configHash).Set(1)
	for _, c := range []prometheus.Collector{m.errors, m.duration, info} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeRun records one plugin run as upstream's runPlugin does: its
// duration, and an error when the run failed or timed out (not when its
// output did not decode).
func (m *metrics) observeRun(plugin string, took time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(plugin).Observe(took.Seconds())
	if failed {
		m.errors.WithLabelValues(plugin).Inc()
	}
}
