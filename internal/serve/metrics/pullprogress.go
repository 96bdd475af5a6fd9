package metrics

import "github.com/prometheus/client_golang/prometheus"

// pullMetrics tell how far the image pulls under way have got, from the
// runtime's content store (internal/images/pullprogress). Upstream has no
// such metrics (KEP-5334 is not merged): they are berth's. Node-wide
// figures, not per image, so that their series stay bounded.
type pullMetrics struct {
	downloaded prometheus.Counter
	remaining  prometheus.Gauge
}

func newPullMetrics() pullMetrics {
	return pullMetrics{
		downloaded: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "berth", Name: "image_pull_downloaded_bytes_total",
			Help: "Bytes of image content the pulls under way downloaded, as the runtime's content store tells it; " +
				"its rate is the node's pull throughput.",
		}),
		remaining: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "berth", Name: "image_pull_remaining_bytes",
			Help: "Bytes of image content the pulls under way still need, once their manifests are known.",
		}),
	}
}

func (p *pullMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.downloaded, p.remaining}
}

// ObservePullProgress counts bytes the pulls downloaded and the change of
// the bytes they still need. It is a kuberuntime Observers.PullProgress
// function.
func (m *Metrics) ObservePullProgress(downloaded, remainingChange int64) {
	if downloaded > 0 {
		m.pulls.downloaded.Add(float64(downloaded))
	}
	m.pulls.remaining.Add(float64(remainingChange))
}
