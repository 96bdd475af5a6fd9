package config

import (
	"crypto/tls"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTLSVersion(t *testing.T) {
	for name, want := range map[string]uint16{"": 0, "VersionTLS10": tls.VersionTLS10, "VersionTLS12": tls.VersionTLS12, "VersionTLS13": tls.VersionTLS13} {
		got, err := TLSVersion(name)
		if err != nil || got != want {
			t.Errorf("TLSVersion(%q) = %x, %v; want %x", name, got, err, want)
		}
	}
	if _, err := TLSVersion("TLS1.3"); err == nil {
		t.Error("an unknown version must be an error")
	}
}

func TestCipherSuites(t *testing.T) {
	got, err := CipherSuites([]string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_RSA_WITH_AES_128_CBC_SHA"})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, err := CipherSuites(nil); got != nil || err != nil {
		t.Errorf("empty = %v, %v; want nil (Go's defaults)", got, err)
	}
	if _, err := CipherSuites([]string{"TLS_FOO"}); err == nil {
		t.Error("an unknown suite must be an error")
	}
}

func TestCurvePreferences(t *testing.T) {
	got, err := CurvePreferences([]int32{29, 23, 4588})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tls.CurveID{tls.X25519, tls.CurveP256, tls.X25519MLKEM768}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range [][]int32{{1234}, {0}, {-23}, {70000}} {
		if _, err := CurvePreferences(bad); err == nil {
			t.Errorf("%v must be an error", bad)
		}
	}
}
