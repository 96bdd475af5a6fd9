package stats

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// metricDef is one metric as upstream declares it: name, help, labels,
// stability and the release that deprecated it (empty: not deprecated).
// The tables below are pinned to upstream's source by tests.
type metricDef struct {
	Name, Help string
	Labels     []string
	Stability  string
	Deprecated string
}

// desc is the metric's descriptor as component-base renders it: the help
// is prefixed with the stability level.
func (d metricDef) desc() *prometheus.Desc {
	help := d.Help
	if d.Stability != "" {
		help = "[" + d.Stability + "] " + help
	}
	return prometheus.NewDesc(d.Name, help, d.Labels, nil)
}

var (
	containerLabels = []string{"container", "pod", "namespace"}
	podLabels       = []string{"pod", "namespace"}
)

// resourceDefs are upstream's /metrics/resource metrics
// (pkg/kubelet/metrics/collectors/resource_metrics.go), by the name of
// upstream's variable.
var resourceDefs = map[string]metricDef{
	"nodeCPUUsageDesc":              {"node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", nil, "STABLE", ""},
	"nodeMemoryUsageDesc":           {"node_memory_working_set_bytes", "Current working set of the node in bytes", nil, "STABLE", ""},
	"nodeSwapUsageDesc":             {"node_swap_usage_bytes", "Current swap usage of the node in bytes. Reported only on non-windows systems", nil, "ALPHA", ""},
	"containerCPUUsageDesc":         {"container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds", containerLabels, "STABLE", ""},
	"containerMemoryUsageDesc":      {"container_memory_working_set_bytes", "Current working set of the container in bytes", containerLabels, "STABLE", ""},
	"containerSwapUsageDesc":        {"container_swap_usage_bytes", "Current amount of the container swap usage in bytes. Reported only on non-windows systems", containerLabels, "ALPHA", ""},
	"containerSwapLimitDesc":        {"container_swap_limit_bytes", "Current amount of the container swap limit in bytes. Reported only on non-windows systems", containerLabels, "ALPHA", ""},
	"podCPUUsageDesc":               {"pod_cpu_usage_seconds_total", "Cumulative cpu time consumed by the pod in core-seconds", podLabels, "STABLE", ""},
	"podMemoryUsageDesc":            {"pod_memory_working_set_bytes", "Current working set of the pod in bytes", podLabels, "STABLE", ""},
	"podSwapUsageDesc":              {"pod_swap_usage_bytes", "Current amount of the pod swap usage in bytes. Reported only on non-windows systems", podLabels, "ALPHA", ""},
	"resourceScrapeResultDesc":      {"scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, "ALPHA", "1.29.0"},
	"resourceScrapeErrorResultDesc": {"resource_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, "STABLE", ""},
	"containerStartTimeDesc":        {"container_start_time_seconds", "Start time of the container since unix epoch in seconds", containerLabels, "STABLE", ""},
}

// resourceDescs are the descriptors of one /metrics/resource scrape.
// scrape_error is not among them: deprecated in 1.29, component-base hides
// it in the releases berth follows (it shows a deprecated metric only up
// to the release after the one that deprecated it).
type resourceDescs struct {
	nodeCPU, nodeMemory, nodeSwap                 *prometheus.Desc
	containerCPU, containerMemory, containerStart *prometheus.Desc
	containerSwap, containerSwapLimit             *prometheus.Desc
	podCPU, podMemory, podSwap                    *prometheus.Desc
	scrapeError                                   *prometheus.Desc
}

func newResourceDescs() resourceDescs {
	d := func(name string) *prometheus.Desc { return resourceDefs[name].desc() }
	return resourceDescs{
		nodeCPU: d("nodeCPUUsageDesc"), nodeMemory: d("nodeMemoryUsageDesc"), nodeSwap: d("nodeSwapUsageDesc"),
		containerCPU: d("containerCPUUsageDesc"), containerMemory: d("containerMemoryUsageDesc"),
		containerStart: d("containerStartTimeDesc"), containerSwap: d("containerSwapUsageDesc"),
		containerSwapLimit: d("containerSwapLimitDesc"),
		podCPU:             d("podCPUUsageDesc"), podMemory: d("podMemoryUsageDesc"), podSwap: d("podSwapUsageDesc"),
		scrapeError: d("resourceScrapeErrorResultDesc"),
	}
}

func (d resourceDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.nodeCPU, d.nodeMemory, d.nodeSwap, d.containerStart, d.containerCPU, d.containerMemory,
		d.containerSwap, d.containerSwapLimit, d.podCPU, d.podMemory, d.podSwap, d.scrapeError}
}

// ResourceHandler serves GET /metrics/resource: the CPU, memory and swap
// of the node, pods and containers from a fresh CPU-and-memory summary,
// each sample stamped with the time it was read.
func ResourceHandler(summary SummaryFunc) http.Handler {
	descs := newResourceDescs()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(resourceCollector{ctx: r.Context(), summary: summary, d: descs})
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

// resourceCollector collects the resource metrics of one scrape; it lives
// for one request.
type resourceCollector struct {
	ctx     context.Context
	summary SummaryFunc
	d       resourceDescs
}

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d.all() {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	sum, err := c.summary(c.ctx, true)
	if err != nil {
		klog.FromContext(c.ctx).Error(err, "Cannot get the summary for the resource metrics endpoint")
		ch <- prometheus.MustNewConstMetric(d.scrapeError, prometheus.GaugeValue, 1)
		return
	}
	emitCPU(ch, d.nodeCPU, sum.Node.CPU)
	emitMemory(ch, d.nodeMemory, sum.Node.Memory)
	emitSwap(ch, d.nodeSwap, nil, sum.Node.Swap)
	for _, pod := range sum.Pods {
		ref := pod.PodRef
		for _, ctr := range pod.Containers {
			if ctr.StartTime.Unix() > 0 {
				ch <- prometheus.MustNewConstMetric(d.containerStart, prometheus.GaugeValue,
					float64(ctr.StartTime.UnixNano())/float64(time.Second), ctr.Name, ref.Name, ref.Namespace)
			}
			emitCPU(ch, d.containerCPU, ctr.CPU, ctr.Name, ref.Name, ref.Namespace)
			emitMemory(ch, d.containerMemory, ctr.Memory, ctr.Name, ref.Name, ref.Namespace)
			emitSwap(ch, d.containerSwap, d.containerSwapLimit, ctr.Swap, ctr.Name, ref.Name, ref.Namespace)
		}
		emitCPU(ch, d.podCPU, pod.CPU, ref.Name, ref.Namespace)
		emitMemory(ch, d.podMemory, pod.Memory, ref.Name, ref.Namespace)
		emitSwap(ch, d.podSwap, nil, pod.Swap, ref.Name, ref.Namespace)
	}
	ch <- prometheus.MustNewConstMetric(d.scrapeError, prometheus.GaugeValue, 0)
}

func emitCPU(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	m := prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...)
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
}

func emitMemory(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	m := prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*s.WorkingSetBytes), labels...)
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
}

// emitSwap emits the swap usage and, for containers (limit not nil), the
// swap limit: usage plus what is still available, as upstream.
func emitSwap(ch chan<- prometheus.Metric, usage, limit *prometheus.Desc, s *statsapi.SwapStats, labels ...string) {
	if s == nil {
		return
	}
	if s.SwapUsageBytes != nil {
		m := prometheus.MustNewConstMetric(usage, prometheus.GaugeValue, float64(*s.SwapUsageBytes), labels...)
		ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
	}
	if limit != nil && s.SwapAvailableBytes != nil {
		m := prometheus.MustNewConstMetric(limit, prometheus.GaugeValue, float64(*s.SwapAvailableBytes+deref(s.SwapUsageBytes)), labels...)
		ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, m)
	}
}
