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

// The resource metrics, as upstream's /metrics/resource exposes them.
var (
	nodeCPUDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"[STABLE] Current working set of the node in bytes", nil, nil)
	containerCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"[STABLE] Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds",
		"[STABLE] Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"[STABLE] Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"[STABLE] Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// ResourceHandler serves GET /metrics/resource: the CPU and memory of the
// node, pods and containers from a fresh CPU-and-memory summary, each
// sample stamped with the time it was read.
func ResourceHandler(summary SummaryFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(resourceCollector{ctx: r.Context(), summary: summary})
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

// resourceCollector collects the resource metrics of one scrape; it lives
// for one request.
type resourceCollector struct {
	ctx     context.Context
	summary SummaryFunc
}

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemoryDesc, containerStartDesc, containerCPUDesc,
		containerMemoryDesc, podCPUDesc, podMemoryDesc, scrapeErrorDesc} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	sum, err := c.summary(c.ctx, true)
	if err != nil {
		klog.FromContext(c.ctx).Error(err, "Cannot get the summary for the resource metrics endpoint")
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 0)
	emitCPU(ch, nodeCPUDesc, sum.Node.CPU)
	emitMemory(ch, nodeMemoryDesc, sum.Node.Memory)
	for _, pod := range sum.Pods {
		ref := pod.PodRef
		for _, ctr := range pod.Containers {
			if ctr.StartTime.Unix() > 0 {
				ch <- prometheus.MustNewConstMetric(containerStartDesc, prometheus.GaugeValue,
					float64(ctr.StartTime.UnixNano())/float64(time.Second), ctr.Name, ref.Name, ref.Namespace)
			}
			emitCPU(ch, containerCPUDesc, ctr.CPU, ctr.Name, ref.Name, ref.Namespace)
			emitMemory(ch, containerMemoryDesc, ctr.Memory, ctr.Name, ref.Name, ref.Namespace)
		}
		emitCPU(ch, podCPUDesc, pod.CPU, ref.Name, ref.Namespace)
		emitMemory(ch, podMemoryDesc, pod.Memory, ref.Name, ref.Namespace)
	}
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
