package sdnotify

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

// TestAccepts: berth's readiness check completes a TLS handshake with the
// kubelet API's kind of server and a plain connection with the others, and
// fails once they are gone.
func TestAccepts(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	handler := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	tlsSrv := httptest.NewTLSServer(handler)
	plain := httptest.NewServer(handler)
	for _, tt := range []struct {
		name string
		srv  *httptest.Server
		tls  bool
	}{{"tls", tlsSrv, true}, {"plain", plain, false}} {
		l := Listener{Addr: tt.srv.Listener.Addr().String(), TLS: tt.tls}
		if !accepts(ctx, l) {
			t.Errorf("%s: a serving server does not accept", tt.name)
		}
		tt.srv.Close()
		if accepts(ctx, l) {
			t.Errorf("%s: a closed server accepts", tt.name)
		}
	}
	// The kubelet API before serverTLSBootstrap's certificate is issued:
	// every handshake fails with an alert, but it serves.
	noCert, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return nil, errors.New("no serving certificate available for the kubelet")
	}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := noCert.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	l := Listener{Addr: noCert.Addr().String(), TLS: true}
	if !accepts(ctx, l) {
		t.Error("a TLS server without a certificate yet does not count as serving")
	}
	noCert.Close()
	if accepts(ctx, l) {
		t.Error("a closed TLS server accepts")
	}
	if got := DialAddr("0.0.0.0", 10250); got != "127.0.0.1:10250" {
		t.Errorf("DialAddr(0.0.0.0) = %s", got)
	}
	if got := DialAddr("::", 10250); got != "[::1]:10250" {
		t.Errorf("DialAddr(::) = %s", got)
	}
}
