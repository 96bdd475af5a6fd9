package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"

	"github.com/berthk8s/berth/internal/cluster/certificate"
	"github.com/berthk8s/berth/internal/serve/metrics"
	"github.com/berthk8s/berth/internal/serve/server"
)

// servingCerts is where the kubelet API's serving certificate and client
// CAs come from, and the components that keep them current. Set once by
// assemble; current and clientCAs are safe for concurrent use.
type servingCerts struct {
	// current is called for every TLS handshake.
	current func() *tls.Certificate
	// clientCAs verifies client certificates; nil without clientCAFile.
	clientCAs func() *x509.CertPool
	// runs are the components to run, by name.
	runs map[string]func(ctx context.Context) error
}

// newServingCerts picks the serving certificate as upstream does:
// serverTLSBootstrap, a certificate requested from the cluster and rotated;
// else tlsCertFile/tlsPrivateKeyFile, reloaded when they change; else the
// self-signed pair in --cert-dir. clientCAFile is reloaded when it changes.
// With the kubelet API off there is nothing to serve.
func (n *node) newServingCerts(ctx context.Context, ips []string) (*servingCerts, error) {
	cfg, kc := n.cfg, &n.cfg.Kubelet
	s := &servingCerts{runs: map[string]func(ctx context.Context) error{}}
	if !n.set.EnableServer {
		return s, nil
	}
	switch {
	case kc.ServerTLSBootstrap:
		obs, err := n.metrics.CertificateObservers(metrics.ServingCertificate)
		if err != nil {
			return nil, err
		}
		m, err := certificate.NewServing(ctx, certificate.ServingConfig{
			Client: n.cluster.apiClient(), NodeName: cfg.NodeName, Addresses: n.cluster.nodeAddresses,
			CertDir: cfg.CertDir, CertFile: kc.TLSCertFile, KeyFile: kc.TLSPrivateKeyFile,
			RenewError: obs.RenewError, Rotated: obs.Rotated,
		})
		if err != nil {
			return nil, err
		}
		if err := n.metrics.CertificateTTL(metrics.ServingCertificate, m.Current); err != nil {
			return nil, err
		}
		s.current, s.runs["serving-certificate"] = m.Current, m.Run
	case kc.TLSCertFile != "":
		r, err := certificate.NewKeyPairReloader(kc.TLSCertFile, kc.TLSPrivateKeyFile, n.clock)
		if err != nil {
			return nil, err
		}
		s.current, s.runs["serving-certificate-files"] = r.Current, r.Run
	default:
		sans := make([]net.IP, 0, len(ips))
		for _, ip := range ips {
			sans = append(sans, net.ParseIP(ip))
		}
		cert, err := server.SelfSigned(cfg.CertDir, cfg.NodeName, sans)
		if err != nil {
			return nil, err
		}
		s.current = func() *tls.Certificate { return cert }
	}
	if path := kc.Authentication.X509.ClientCAFile; path != "" {
		r, err := certificate.NewCAReloader(path, n.clock)
		if err != nil {
			return nil, err
		}
		s.clientCAs, s.runs["client-ca-file"] = r.Current, r.Run
	}
	return s, nil
}
