package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ImageVolumes are upstream's image volume metrics, counted as upstream's
// incrementImageVolumeMetrics counts them after each container start that
// got its image volumes: kubelet_image_volume_requested_total the image
// volumes the container mounts, and per volumeMount of one of them
// kubelet_image_volume_mounted_errors_total when the runtime refused to
// create the container with an ImageVolumeMountFailed error, else
// kubelet_image_volume_mounted_succeed_total.
type ImageVolumes struct {
	requested, succeeded, failed prometheus.Counter
}

func newImageVolumes() *ImageVolumes {
	return &ImageVolumes{
		requested: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "image_volume_requested_total",
			Help: beta + "Number of requested image volumes.",
		}),
		succeeded: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "image_volume_mounted_succeed_total",
			Help: beta + "Number of successful image volume mounts.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "image_volume_mounted_errors_total",
			Help: beta + "Number of failed image volume mounts.",
		}),
	}
}

// NewImageVolumes registers the image volume metrics; call it once.
func (m *Metrics) NewImageVolumes() (*ImageVolumes, error) {
	v := newImageVolumes()
	for _, c := range []prometheus.Collector{v.requested, v.succeeded, v.failed} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("register image volume metrics: %w", err)
		}
	}
	return v, nil
}

// Started counts one container start with its image volumes: requested
// volumes, and mounts volumeMounts of them, failed or not. It is a
// kuberuntime.Observers ImageVolumesStarted function.
func (v *ImageVolumes) Started(requested, mounts int, failed bool) {
	v.requested.Add(float64(requested))
	if failed {
		v.failed.Add(float64(mounts))
	} else {
		v.succeeded.Add(float64(mounts))
	}
}
