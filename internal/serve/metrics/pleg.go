package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Relist is what the metrics need of one PLEG relist; the wiring fills it
// from the PLEG's own figures (pleg.RelistStats). A plain value.
type Relist struct {
	// Duration of the relist; Interval since the start of the previous
	// successful one (zero for the first).
	Duration, Interval time.Duration
	// Failed: the listing failed, so RunningPods and Containers say nothing.
	Failed bool
	// Dropped counts the events the PLEG dropped because its channel was
	// full.
	Dropped int
	// RunningPods counts the listed pods with a ready sandbox, Containers
	// the listed containers by state ("created", "running", "exited",
	// "unknown").
	RunningPods int
	Containers  map[string]int
}

// plegMetrics are the PLEG and running pods/containers metrics.
type plegMetrics struct {
	relistDuration, relistInterval prometheus.Histogram
	lastSeen                       prometheus.Gauge
	discarded                      prometheus.Counter
	runningPods                    prometheus.Gauge
	runningContainers              *prometheus.GaugeVec
}

func newPLEGMetrics() plegMetrics {
	return plegMetrics{
		relistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_duration_seconds",
			Help: alpha + "Duration in seconds for relisting pods in PLEG.", Buckets: prometheus.DefBuckets,
		}),
		relistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pleg_relist_interval_seconds",
			Help: alpha + "Interval in seconds between relisting in PLEG.", Buckets: prometheus.DefBuckets,
		}),
		lastSeen: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "pleg_last_seen_seconds",
			Help: alpha + "Timestamp in seconds when PLEG was last seen active.",
		}),
		discarded: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "pleg_discard_events", Help: alpha + "The number of discard events in PLEG.",
		}),
		runningPods: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_pods", Help: alpha + "Number of pods that have a running pod sandbox",
		}),
		runningContainers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_containers", Help: alpha + "Number of containers currently running",
		}, []string{"container_state"}),
	}
}

func (p *plegMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.relistDuration, p.relistInterval, p.lastSeen, p.discarded, p.runningPods, p.runningContainers}
}

// containerStates are the states kubelet_running_containers reports,
// upstream's container states.
var containerStates = []string{"created", "running", "exited", "unknown"}

// ObserveRelist records one relist, as upstream's generic PLEG does: its
// duration and the interval since the previous successful one; discarded
// events; and on success the last-seen timestamp and the running pods and
// containers. The PLEG calls it on its relist goroutine, through the
// wiring; it does not block.
func (m *Metrics) ObserveRelist(s Relist) {
	p := &m.pleg
	p.relistDuration.Observe(s.Duration.Seconds())
	if s.Interval > 0 {
		p.relistInterval.Observe(s.Interval.Seconds())
	}
	if s.Dropped > 0 {
		p.discarded.Add(float64(s.Dropped))
	}
	if s.Failed {
		return
	}
	p.lastSeen.Set(float64(m.clock.Now().Add(-s.Duration).Unix()))
	p.runningPods.Set(float64(s.RunningPods))
	for _, state := range containerStates {
		p.runningContainers.WithLabelValues(state).Set(float64(s.Containers[state]))
	}
}
