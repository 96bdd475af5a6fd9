package metrics

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// PodStatsFunc lists the pods' stats, as a /stats/summary gives them.
type PodStatsFunc func(ctx context.Context) ([]statsapi.PodStats, error)

// volumeStatsLabels are the labels of every kubelet_volume_stats_* metric.
var volumeStatsLabels = []string{"namespace", "persistentvolumeclaim"}

// volumeStatsDescs are upstream's kubelet_volume_stats_* metrics
// (pkg/kubelet/metrics/collectors/volume_stats.go), in its order:
// volumestats_upstream_test.go pins their names, help, labels and
// stability. Each reads one figure of a volume's FsStats.
var volumeStatsDescs = []struct {
	name, help string
	value      func(*statsapi.FsStats) *uint64
}{
	{"volume_stats_capacity_bytes", "Capacity in bytes of the volume", func(s *statsapi.FsStats) *uint64 { return s.CapacityBytes }},
	{"volume_stats_available_bytes", "Number of available bytes in the volume", func(s *statsapi.FsStats) *uint64 { return s.AvailableBytes }},
	{"volume_stats_used_bytes", "Number of used bytes in the volume", func(s *statsapi.FsStats) *uint64 { return s.UsedBytes }},
	{"volume_stats_inodes", "Maximum number of inodes in the volume", func(s *statsapi.FsStats) *uint64 { return s.Inodes }},
	{"volume_stats_inodes_free", "Number of free inodes in the volume", func(s *statsapi.FsStats) *uint64 { return s.InodesFree }},
	{"volume_stats_inodes_used", "Number of used inodes in the volume", func(s *statsapi.FsStats) *uint64 { return s.InodesUsed }},
}

func volumeStatsDesc(i int) *prometheus.Desc {
	d := volumeStatsDescs[i]
	return prometheus.NewDesc("kubelet_"+d.name, alpha+d.help, volumeStatsLabels, nil)
}

// HandlerWithVolumeStats is Handler with the kubelet_volume_stats_*
// metrics added: for each scrape, under its request's context, the pods'
// stats are listed and every volume with a pvcRef is reported once per
// claim, as upstream's volume stats collector. A failed listing reports
// none of them (and is logged).
func (m *Metrics) HandlerWithVolumeStats(list PodStatsFunc) http.Handler {
	descs := make([]*prometheus.Desc, len(volumeStatsDescs))
	for i := range volumeStatsDescs {
		descs[i] = volumeStatsDesc(i)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrape := prometheus.NewRegistry()
		scrape.MustRegister(volumeStatsCollector{ctx: r.Context(), list: list, descs: descs})
		promhttp.HandlerFor(prometheus.Gatherers{m.reg, scrape}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	})
}

// volumeStatsCollector collects the volume stats of one scrape; it lives
// for one request.
type volumeStatsCollector struct {
	ctx   context.Context
	list  PodStatsFunc
	descs []*prometheus.Desc
}

func (c volumeStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c volumeStatsCollector) Collect(ch chan<- prometheus.Metric) {
	pods, err := c.list(c.ctx)
	if err != nil {
		klog.FromContext(c.ctx).V(2).Info("Cannot list pod stats for the volume stats metrics", "err", err)
		return
	}
	seen := map[statsapi.PVCReference]bool{}
	for _, pod := range pods {
		for _, vs := range pod.VolumeStats {
			ref := vs.PVCRef
			if ref == nil || seen[*ref] {
				continue
			}
			seen[*ref] = true
			for i, d := range volumeStatsDescs {
				if v := d.value(&vs.FsStats); v != nil {
					ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.GaugeValue, float64(*v), ref.Namespace, ref.Name)
				}
			}
		}
	}
}
