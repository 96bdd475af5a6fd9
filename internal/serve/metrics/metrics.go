package metrics

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// Help text prefixes, as component-base renders the stability level of
// each upstream metric.
const (
	alpha    = "[ALPHA] "
	beta     = "[BETA] "
	stable   = "[STABLE] "
	internal = "[INTERNAL] "
)

// Bucket layouts of upstream's kubelet metrics.
var (
	// podStartupBuckets are upstream's podStartupDurationBuckets.
	podStartupBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	// runtimeBuckets are upstream's runtime operation buckets.
	runtimeBuckets = prometheus.ExponentialBuckets(.005, 2.5, 14)
)

// Config is what New needs.
type Config struct {
	// NodeName labels kubelet_node_name.
	NodeName string
	// Clock stamps pod startup observations (required).
	Clock clock.PassiveClock
}

// Metrics is berth's metric set. Its methods are safe for concurrent use;
// the observers (ObserveCRI, ObserveRelist, ObservePodSync, the startup
// tracker) never block.
type Metrics struct {
	reg      *prometheus.Registry
	clock    clock.PassiveClock
	runtime  runtimeMetrics
	pleg     plegMetrics
	pods     podMetrics
	startup  *startupTracker
	imageGC  *prometheus.CounterVec
	eviction evictionMetrics
	stages   stageMetrics
	resize   resizeMetrics
	pulls    pullMetrics
	// startLimit is berth_pod_start_limit (startlimit.go).
	startLimit prometheus.Gauge
}

// New builds the registry and registers every collector. It starts nothing.
func New(cfg Config) (*Metrics, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("create metrics: node name is required")
	}
	if cfg.Clock == nil {
		return nil, errors.New("create metrics: clock is required")
	}
	m := &Metrics{
		reg:        prometheus.NewRegistry(),
		clock:      cfg.Clock,
		runtime:    newRuntimeMetrics(),
		pleg:       newPLEGMetrics(),
		pods:       newPodMetrics(),
		imageGC:    newImageGCTotal(),
		eviction:   newEvictionMetrics(),
		stages:     newStageMetrics(),
		resize:     newResizeMetrics(),
		pulls:      newPullMetrics(),
		startLimit: newStartLimit(),
	}
	m.startup = newStartupTracker(cfg.Clock, &m.pods)
	nodeName := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: "kubelet", Name: "node_name", Help: alpha + "The node's name. The count is always 1.",
	}, []string{"node"})
	nodeName.WithLabelValues(cfg.NodeName).Set(1)
	cs := []prometheus.Collector{
		nodeName,
		m.imageGC,
		m.startLimit,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	cs = append(cs, m.runtime.collectors()...)
	cs = append(cs, m.pleg.collectors()...)
	cs = append(cs, m.pods.collectors()...)
	cs = append(cs, m.eviction.collectors()...)
	cs = append(cs, m.stages.collectors()...)
	cs = append(cs, m.resize.collectors()...)
	cs = append(cs, m.pulls.collectors()...)
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Registry is the registry every berth metric lives in. Other packages may
// register their own collectors into it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats (GET
// /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
