package server

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSelfSigned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	cert, err := SelfSigned(dir, "node-1", []net.IP{net.ParseIP("10.0.0.5")})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
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
	cert2, err := SelfSigned(dir, "node-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "kubelet.crt"))
	if string(before) != string(after) || string(cert2.Certificate[0]) != string(cert.Certificate[0]) {
		t.Error("the self-signed certificate was regenerated instead of reused")
	}
}

func TestServingTLSOptions(t *testing.T) {
	cert := selfSigned(t, "node-1")
	cfg, err := ServingTLS(TLSOptions{Certificate: func() *tls.Certificate { return cert }})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.CipherSuites != nil || cfg.ClientAuth != tls.RequestClientCert || cfg.GetConfigForClient != nil {
		t.Errorf("defaults: min %x suites %v client auth %v", cfg.MinVersion, cfg.CipherSuites, cfg.ClientAuth)
	}
	suites := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
	cfg, err = ServingTLS(TLSOptions{Certificate: func() *tls.Certificate { return cert },
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
	if _, err := ServingTLS(TLSOptions{}); err == nil {
		t.Error("no certificate source must be an error")
	}
}

// TestServingTLSPerHandshake handshakes for real: no certificate fails the
// handshake, and a new certificate or CA bundle is used from the next one
// on, without a new listener.
func TestServingTLSPerHandshake(t *testing.T) {
	var cur atomic.Pointer[tls.Certificate]
	var cas atomic.Pointer[x509.CertPool]
	cas.Store(x509.NewCertPool())
	cfg, err := ServingTLS(TLSOptions{Certificate: cur.Load, ClientCAs: cas.Load})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveHandshakes(t, cfg)
	if _, err := handshake(addr); err == nil {
		t.Fatal("handshake succeeded without a serving certificate")
	}
	for _, host := range []string{"first", "second"} {
		cur.Store(selfSigned(t, host))
		st, err := handshake(addr)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		if got := st.PeerCertificates[0].Subject.CommonName; !strings.HasPrefix(got, host+"@") {
			t.Errorf("served %q, want %q@<time>", got, host)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(mustLeaf(t, selfSigned(t, "client-ca")))
	cas.Store(pool)
	c, err := cfg.GetConfigForClient(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.ClientCAs.Equal(pool) || c.GetCertificate == nil || c.NextProtos[0] != "http/1.1" {
		t.Errorf("per-client config: CAs not the current bundle or settings lost: %+v", c)
	}
}

// TestMinVersionRefusesOlderClients handshakes for real: a TLS 1.2 client
// is refused by a server whose minimum is TLS 1.3.
func TestMinVersionRefusesOlderClients(t *testing.T) {
	cert := selfSigned(t, "node-1")
	cfg, err := ServingTLS(TLSOptions{Certificate: func() *tls.Certificate { return cert }, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveHandshakes(t, cfg)
	for _, tc := range []struct {
		max     uint16
		wantErr bool
	}{{tls.VersionTLS12, true}, {tls.VersionTLS13, false}} {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tc.max}) //nolint:gosec // self-signed test server
		if (err != nil) != tc.wantErr {
			t.Errorf("client max %x: err = %v, want error %v", tc.max, err, tc.wantErr)
		}
		if err == nil {
			c.Close()
		}
	}
}

func selfSigned(t *testing.T, host string) *tls.Certificate {
	t.Helper()
	c, err := SelfSigned(t.TempDir(), host, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustLeaf(t *testing.T, c *tls.Certificate) *x509.Certificate {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// serveHandshakes accepts connections and handshakes each until the test
// ends; it returns the address.
func serveHandshakes(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
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
	return ln.Addr().String()
}

func handshake(addr string) (tls.ConnectionState, error) {
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed test server
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.ConnectionState(), nil
}
