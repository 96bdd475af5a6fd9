package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// TLSOptions is the serving TLS part of the KubeletConfiguration.
type TLSOptions struct {
	// Certificate returns the serving certificate; it is called for every
	// handshake, so a rotated or reloaded certificate takes effect at once.
	// A nil result fails the handshake, as upstream's kubelet does until
	// its serving certificate is issued.
	Certificate func() *tls.Certificate
	// MinVersion and CipherSuites are tlsMinVersion and tlsCipherSuites,
	// parsed (config.TLSVersion, config.CipherSuites); zero and nil mean
	// TLS 1.2 and Go's default suites.
	MinVersion   uint16
	CipherSuites []uint16
	// CurvePreferences is tlsCurvePreferences (nil: Go's defaults).
	CurvePreferences []tls.CurveID
	// ClientCAs, when set, returns the CAs offered to clients as the
	// acceptable ones, read for every handshake.
	ClientCAs func() *x509.CertPool
}

// errNoServingCertificate fails a handshake before a certificate exists.
var errNoServingCertificate = errors.New("no serving certificate available for the kubelet")

// ServingTLS returns the TLS configuration of the kubelet API: the serving
// certificate and client CAs of the moment for each handshake, the minimum
// version and cipher suites, HTTP/1.1 only (exec, attach and port-forward
// upgrade the connection), and a request (not a demand) for a client
// certificate, which authentication verifies.
func ServingTLS(opts TLSOptions) (*tls.Config, error) {
	if opts.Certificate == nil {
		return nil, errors.New("serve TLS: no serving certificate source")
	}
	minVersion := opts.MinVersion
	if minVersion == 0 {
		minVersion = tls.VersionTLS12
	}
	get := opts.Certificate
	cfg := &tls.Config{
		MinVersion:       minVersion,
		CipherSuites:     opts.CipherSuites,
		CurvePreferences: opts.CurvePreferences,
		NextProtos:       []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := get(); c != nil {
				return c, nil
			}
			return nil, errNoServingCertificate
		},
		ClientAuth: tls.RequestClientCert,
	}
	if opts.ClientCAs != nil {
		base := cfg.Clone()
		cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			c := base.Clone()
			c.ClientCAs = opts.ClientCAs()
			return c, nil
		}
	}
	return cfg, nil
}

// SelfSigned returns the self-signed pair in certDir (EnsureSelfSigned),
// upstream's serving certificate when neither tlsCertFile nor
// serverTLSBootstrap is set.
func SelfSigned(certDir, host string, ips []net.IP) (*tls.Certificate, error) {
	certFile, keyFile, err := EnsureSelfSigned(certDir, host, ips)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load serving certificate %q: %w", certFile, err)
	}
	return &cert, nil
}

// EnsureSelfSigned returns the paths of certDir/kubelet.crt and
// kubelet.key, generating a self-signed pair for host (and ips) when they
// cannot both be read, and reusing them otherwise.
func EnsureSelfSigned(certDir, host string, ips []net.IP) (certFile, keyFile string, err error) {
	if certDir == "" {
		return "", "", errors.New("generate serving certificate: no cert dir")
	}
	certFile, keyFile = filepath.Join(certDir, "kubelet.crt"), filepath.Join(certDir, "kubelet.key")
	if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); ok {
		return certFile, keyFile, nil
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, ips, nil)
	if err != nil {
		return "", "", fmt.Errorf("generate serving certificate for %q: %w", host, err)
	}
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		return "", "", fmt.Errorf("create cert dir %q: %w", certDir, err)
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return "", "", fmt.Errorf("write certificate %q: %w", certFile, err)
	}
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return "", "", fmt.Errorf("write key %q: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}
