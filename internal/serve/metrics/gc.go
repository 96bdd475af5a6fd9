package metrics

import "github.com/prometheus/client_golang/prometheus"

// imageGCReasons are the reason label values of
// kubelet_image_garbage_collected_total (upstream's
// ImageGarbageCollectedTotalReason*), pre-created so both series exist.
var imageGCReasons = []string{"age", "space"}

func newImageGCTotal() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: "kubelet", Name: "image_garbage_collected_total",
		Help: alpha + "Total number of images garbage collected by the kubelet, whether through disk usage or image age.",
	}, []string{"reason"})
	for _, r := range imageGCReasons {
		c.WithLabelValues(r)
	}
	return c
}

// ObserveImageCollected counts one image removed by the image GC, for
// reason "age" or "space". It is a gc.ImageConfig Collected function.
func (m *Metrics) ObserveImageCollected(reason string) {
	m.imageGC.WithLabelValues(reason).Inc()
}
