package server

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServingTLSSelfSigned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	opts := TLSOptions{CertDir: dir, Host: "node-1", IPs: []net.IP{net.ParseIP("10.0.0.5")}}
	cfg, err := ServingTLS(opts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.CipherSuites != nil || cfg.ClientAuth != tls.RequestClientCert {
		t.Errorf("defaults: min %x suites %v client auth %v", cfg.MinVersion, cfg.CipherSuites, cfg.ClientAuth)
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("node-1"); err != nil {
		t.Errorf("host name SAN: %v", err)
	}
	if err := leaf.VerifyHostname("10.0.0.5"); err != nil {
		t.Errorf("node IP SAN: %v", err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "kubelet.crt"))
	if err != nil {
		t.Fatalf("kubelet.crt not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kubelet.key")); err != nil {
		t.Fatalf("kubelet.key not written: %v", err)
	}
	// A second start reuses the pair.
	cfg2, err := ServingTLS(opts)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "kubelet.crt"))
	if string(before) != string(after) || string(cfg2.Certificates[0].Certificate[0]) != string(cfg.Certificates[0].Certificate[0]) {
		t.Error("the self-signed certificate was regenerated instead of reused")
	}
}

func TestServingTLSFilesAndOptions(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, err := EnsureSelfSigned(dir, "elsewhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	suites := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
	cfg, err := ServingTLS(TLSOptions{CertFile: certFile, KeyFile: keyFile, CertDir: filepath.Join(dir, "unused"),
		MinVersion: tls.VersionTLS13, CipherSuites: suites, CurvePreferences: []tls.CurveID{tls.X25519}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS13 {
		t.Errorf("min version %x", cfg.MinVersion)
	}
	if diff := cmp.Diff(suites, cfg.CipherSuites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]tls.CurveID{tls.X25519}, cfg.CurvePreferences); diff != "" {
		t.Errorf("curves (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); !os.IsNotExist(err) {
		t.Errorf("the cert dir must not be used when files are given: %v", err)
	}
	if _, err := ServingTLS(TLSOptions{CertFile: filepath.Join(dir, "missing.crt"), KeyFile: keyFile}); err == nil {
		t.Error("a missing certificate file must be an error")
	}
}

// TestMinVersionRefusesOlderClients handshakes for real: a TLS 1.2 client
// is refused by a server whose minimum is TLS 1.3.
func TestMinVersionRefusesOlderClients(t *testing.T) {
	cfg, err := ServingTLS(TLSOptions{CertDir: t.TempDir(), Host: "node-1", MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	for _, tc := range []struct {
		max     uint16
		wantErr bool
	}{{tls.VersionTLS12, true}, {tls.VersionTLS13, false}} {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, MaxVersion: tc.max}) //nolint:gosec // self-signed test server
		if (err != nil) != tc.wantErr {
			t.Errorf("client max %x: err = %v, want error %v", tc.max, err, tc.wantErr)
		}
		if err == nil {
			c.Close()
		}
	}
}
