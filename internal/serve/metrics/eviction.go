package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Upstream's EvictionsKey and EvictionStatsAgeKey, pinned by
// TestEvictionNamesMatchUpstream.
const (
	evictionsName        = "evictions"
	evictionStatsAgeName = "eviction_stats_age_seconds"
)

// evictionMetrics are upstream's eviction manager metrics.
type evictionMetrics struct {
	evictions *prometheus.CounterVec
	statsAge  *prometheus.HistogramVec
}

func newEvictionMetrics() evictionMetrics {
	return evictionMetrics{
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: evictionsName, Help: alpha + "Cumulative number of pod evictions by eviction signal",
		}, []string{"eviction_signal"}),
		statsAge: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: evictionStatsAgeName,
			Help:    alpha + "Time between when stats are collected, and when pod is evicted based on those stats by eviction signal",
			Buckets: prometheus.DefBuckets,
		}, []string{"eviction_signal"}),
	}
}

func (e *evictionMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.evictions, e.statsAge}
}

// ObserveEviction counts one pod eviction for signal (kubelet_evictions).
func (m *Metrics) ObserveEviction(signal string) {
	m.eviction.evictions.WithLabelValues(signal).Inc()
}

// ObserveEvictionStatsAge records how old the stats were that a threshold
// evicting pods was met on (kubelet_eviction_stats_age_seconds).
func (m *Metrics) ObserveEvictionStatsAge(signal string, age time.Duration) {
	m.eviction.statsAge.WithLabelValues(signal).Observe(age.Seconds())
}
