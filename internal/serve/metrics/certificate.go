package metrics

import (
	"crypto/tls"
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// CertificateKind names one of the kubelet's certificate managers.
type CertificateKind int

const (
	// ClientCertificate is the API client certificate (rotateCertificates).
	ClientCertificate CertificateKind = iota
	// ServingCertificate is the kubelet API's certificate from the cluster
	// (serverTLSBootstrap).
	ServingCertificate
)

// serverRotationBuckets are upstream's for
// kubelet_certificate_manager_server_rotation_seconds: a minute to four
// years.
var serverRotationBuckets = []float64{60, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000}

// CertificateObservers feed one certificate manager's metrics.
type CertificateObservers struct {
	// RenewError counts a failed renewal.
	RenewError func()
	// Rotated records how long the previous certificate lived, in
	// seconds; nil for the client certificate, as upstream.
	Rotated func(seconds float64)
}

// CertificateObservers registers the counters of one certificate manager
// under upstream's names and returns their observers (the manager's
// Config takes them before it exists; CertificateTTL then registers the
// gauge that reads it):
//   - client: kubelet_certificate_manager_client_expiration_renew_errors;
//   - serving: kubelet_server_expiration_renew_errors and
//     kubelet_certificate_manager_server_rotation_seconds.
//
// Call it once per kind.
func (m *Metrics) CertificateObservers(kind CertificateKind) (CertificateObservers, error) {
	const renewHelp = alpha + "Counter of certificate renewal errors."
	var obs CertificateObservers
	var cs []prometheus.Collector
	switch kind {
	case ClientCertificate:
		renew := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "kubelet", Subsystem: "certificate_manager", Name: "client_expiration_renew_errors", Help: renewHelp})
		obs.RenewError, cs = renew.Inc, append(cs, renew)
	case ServingCertificate:
		renew := prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "kubelet", Name: "server_expiration_renew_errors", Help: renewHelp})
		rotation := prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "certificate_manager_server_rotation_seconds",
			Help:    alpha + "Histogram of the number of seconds the previous certificate lived before being rotated.",
			Buckets: serverRotationBuckets})
		obs.RenewError, obs.Rotated, cs = renew.Inc, rotation.Observe, append(cs, renew, rotation)
	default:
		return CertificateObservers{}, fmt.Errorf("register certificate metrics: unknown kind %d", kind)
	}
	return obs, m.register(cs...)
}

// CertificateTTL registers the TTL gauge of one certificate manager,
// kubelet_certificate_manager_client_ttl_seconds or
// kubelet_certificate_manager_server_ttl_seconds: read at each scrape from
// current, the seconds until the certificate expires (negative once it
// has), +Inf while there is none.
func (m *Metrics) CertificateTTL(kind CertificateKind, current func() *tls.Certificate) error {
	var opts prometheus.GaugeOpts
	switch kind {
	case ClientCertificate:
		opts = prometheus.GaugeOpts{Subsystem: "kubelet", Name: "certificate_manager_client_ttl_seconds",
			Help: alpha + "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. " +
				"The value is in seconds until certificate expiry (negative if already expired). " +
				"If client certificate is invalid or unused, the value will be +INF."}
	case ServingCertificate:
		opts = prometheus.GaugeOpts{Subsystem: "kubelet", Name: "certificate_manager_server_ttl_seconds",
			Help: alpha + "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. " +
				"The value is in seconds until certificate expiry (negative if already expired). " +
				"If serving certificate is invalid or unused, the value will be +INF."}
	default:
		return fmt.Errorf("register certificate metrics: unknown kind %d", kind)
	}
	return m.register(prometheus.NewGaugeFunc(opts, func() float64 {
		if c := current(); c != nil && c.Leaf != nil {
			return math.Trunc(c.Leaf.NotAfter.Sub(m.clock.Now()).Seconds())
		}
		return math.Inf(1)
	}))
}

// register adds collectors to the registry.
func (m *Metrics) register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return fmt.Errorf("register metric: %w", err)
		}
	}
	return nil
}
