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
	// CertFile and KeyFile are tlsCertFile and tlsPrivateKeyFile; when
	// both are empty a self-signed pair in CertDir is used.
	CertFile, KeyFile string
	// CertDir is --cert-dir: where kubelet.crt and kubelet.key live.
	CertDir string
	// Host and IPs go into a generated certificate's SANs.
	Host string
	IPs  []net.IP
	// MinVersion and CipherSuites are tlsMinVersion and tlsCipherSuites,
	// parsed (config.TLSVersion, config.CipherSuites); zero and nil mean
	// TLS 1.2 and Go's default suites.
	MinVersion   uint16
	CipherSuites []uint16
	// CurvePreferences is tlsCurvePreferences (nil: Go's defaults).
	CurvePreferences []tls.CurveID
	// ClientCAs, when set, is offered to clients as the acceptable CAs.
	ClientCAs *x509.CertPool
}

// ServingTLS returns the TLS configuration of the kubelet API: the serving
// certificate, the minimum version and cipher suites, and a request (not a
// demand) for a client certificate, which authentication verifies.
func ServingTLS(opts TLSOptions) (*tls.Config, error) {
	cert, err := servingCertificate(opts)
	if err != nil {
		return nil, err
	}
	minVersion := opts.MinVersion
	if minVersion == 0 {
		minVersion = tls.VersionTLS12
	}
	return &tls.Config{
		MinVersion:       minVersion,
		CipherSuites:     opts.CipherSuites,
		CurvePreferences: opts.CurvePreferences,
		Certificates:     []tls.Certificate{cert},
		ClientAuth:       tls.RequestClientCert,
		ClientCAs:        opts.ClientCAs,
	}, nil
}

// servingCertificate loads tlsCertFile/tlsPrivateKeyFile, or the
// self-signed pair in the cert dir, generating it on first use as upstream.
func servingCertificate(opts TLSOptions) (tls.Certificate, error) {
	certFile, keyFile := opts.CertFile, opts.KeyFile
	if certFile == "" && keyFile == "" {
		var err error
		if certFile, keyFile, err = EnsureSelfSigned(opts.CertDir, opts.Host, opts.IPs); err != nil {
			return tls.Certificate{}, err
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load serving certificate %q: %w", certFile, err)
	}
	return cert, nil
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
