package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PullRecords are the image pull records' metrics, upstream's
// kubelet_imagemanager_*: the credential checks by result, and how many
// intents and records are on disk. (Upstream's in-memory cache usage
// gauges have no counterpart: berth keeps every record in memory.)
type PullRecords struct {
	checks           *prometheus.CounterVec
	intents, records prometheus.Gauge
}

func newPullRecords() *PullRecords {
	return &PullRecords{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "imagemanager_image_mustpull_checks_total",
			Help: alpha + "Counter for how many times kubelet checked whether credentials need to be re-verified to access an image",
		}, []string{"result"}),
		intents: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "imagemanager_ondisk_pullintents",
			Help: alpha + "Number of ImagePullIntents stored on disk.",
		}),
		records: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "imagemanager_ondisk_pulledrecords",
			Help: alpha + "Number of ImagePulledRecords stored on disk.",
		}),
	}
}

// NewPullRecords registers the image pull records' metrics; call it once,
// when the records are kept (the KubeletEnsureSecretPulledImages gate).
func (m *Metrics) NewPullRecords() (*PullRecords, error) {
	p := newPullRecords()
	for _, c := range []prometheus.Collector{p.checks, p.intents, p.records} {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("register image pull record metrics: %w", err)
		}
	}
	return p, nil
}

// Checked counts one credential check with its result
// (pullrecords.Result*). It is a pullrecords.Config Checked function.
func (p *PullRecords) Checked(result string) { p.checks.WithLabelValues(result).Inc() }

// Counts sets the numbers of intents and records on disk. It is a
// pullrecords.Config Counts function.
func (p *PullRecords) Counts(intents, records int) {
	p.intents.Set(float64(intents))
	p.records.Set(float64(records))
}
