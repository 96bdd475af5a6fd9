package certificate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// rotation switches every API client to the Manager's newest client
// certificate: the transport it installs picks the certificate per TLS
// handshake, and run closes the connections made with the old one when
// the Manager changes it, as upstream's UpdateTransport. Only run's
// goroutine touches state.
type rotation struct {
	manager certificate.Manager
	dialer  *connrotation.Dialer
	clock   clock.WithTicker
	state   rotationState
}

// newRotation installs the rotating transport into cfg, which must carry
// no transport, dialer or client credentials of its own
// (rest.AnonymousClientConfig); its CA and server name are kept.
func newRotation(cfg *rest.Config, m certificate.Manager, clk clock.WithTicker) (*rotation, error) {
	if cfg.Transport != nil || cfg.Dial != nil {
		return nil, errors.New("install rotating transport: the client config already has a transport or dialer")
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("install rotating transport: %w", err)
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	tlsCfg.Certificates = nil
	tlsCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := m.Current(); c != nil {
			return c, nil
		}
		return &tls.Certificate{}, nil // no certificate yet: anonymous
	}
	d := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 25,
		DialContext:         d.DialContext,
	})
	// The transport enforces the TLS settings now; rest refuses a config
	// with both.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	return &rotation{manager: m, dialer: d, clock: clk, state: rotationState{lastAvailable: clk.Now(), last: m.Current()}}, nil
}

// run checks for a new certificate every defaultCheckPeriod (every
// firstCertPeriod until there is one) until ctx ends or the node has been
// without a valid certificate for too long.
func (r *rotation) run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for {
		period := defaultCheckPeriod
		if r.state.last == nil {
			period = firstCertPeriod
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.clock.After(period):
		}
		cur := r.manager.Current()
		closeConns, err := r.state.observe(cur, r.clock.Now(), r.manager.ServerHealthy)
		if err != nil {
			return err
		}
		if closeConns {
			logger.Info("Client certificate rotated, closing the API connections made with the old one", "notAfter", notAfter(cur))
			r.dialer.CloseAll()
		}
	}
}

// rotationState is what the transport remembers between checks. A plain
// value owned by one goroutine.
type rotationState struct {
	// last is the certificate the open connections were made with.
	last *tls.Certificate
	// lastAvailable is when a certificate was last there.
	lastAvailable time.Time
}

// observe takes the Manager's current certificate at now and says whether
// the connections must be closed (the certificate changed) or the node
// must stop (as upstream exits): no certificate for exitAfter, or an
// expired one, while healthy says the API server answers. Without an
// answering server there is nothing a restart would fix, so it waits.
func (s *rotationState) observe(cur *tls.Certificate, now time.Time, healthy func() bool) (closeConns bool, err error) {
	switch {
	case cur == nil:
		if now.After(s.lastAvailable.Add(exitAfter)) && healthy() {
			return false, fmt.Errorf("rotate client certificate: no valid client certificate since %s and the API server answers",
				s.lastAvailable.UTC().Format(time.RFC3339))
		}
		return false, nil
	case cur.Leaf != nil && now.After(cur.Leaf.NotAfter) && healthy():
		return false, fmt.Errorf("rotate client certificate: the current one expired at %s and the API server answers",
			cur.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	s.lastAvailable = now
	if cur == s.last {
		return false, nil
	}
	s.last = cur
	return true, nil
}

// notAfter is when cert expires, for logs.
func notAfter(cert *tls.Certificate) string {
	if cert == nil || cert.Leaf == nil {
		return ""
	}
	return cert.Leaf.NotAfter.UTC().Format(time.RFC3339)
}
