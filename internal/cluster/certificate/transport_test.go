package certificate

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeManager is a certificate.Manager whose current certificate the test
// sets.
type fakeManager struct {
	cur     atomic.Pointer[tls.Certificate]
	healthy atomic.Bool
}

func (m *fakeManager) Start()                    {}
func (m *fakeManager) Stop()                     {}
func (m *fakeManager) Current() *tls.Certificate { return m.cur.Load() }
func (m *fakeManager) ServerHealthy() bool       { return m.healthy.Load() }

// TestObserve is the rotating transport's decision at each check.
func TestObserve(t *testing.T) {
	old := tlsPair(t, newPair(t, "old", testNow.Add(-time.Hour), testNow.Add(time.Hour)))
	renewed := tlsPair(t, newPair(t, "new", testNow.Add(-time.Minute), testNow.Add(2*time.Hour)))
	expired := tlsPair(t, newPair(t, "expired", testNow.Add(-2*time.Hour), testNow.Add(-time.Second)))
	since := testNow.Add(-time.Minute)
	long := testNow.Add(-exitAfter - time.Second)
	tests := []struct {
		name          string
		state         rotationState
		cur           *tls.Certificate
		healthy       bool
		wantClose     bool
		wantErr       string
		wantLast      *tls.Certificate
		wantAvailable time.Time
	}{
		{"same certificate: nothing", rotationState{last: old, lastAvailable: since}, old, true, false, "", old, testNow},
		{"renewed: close the old connections", rotationState{last: old, lastAvailable: since}, renewed, true, true, "", renewed, testNow},
		{"first certificate after bootstrap: close the anonymous connections", rotationState{lastAvailable: since}, renewed, true, true, "", renewed, testNow},
		{"no certificate for a while: wait", rotationState{lastAvailable: since}, nil, true, false, "", nil, since},
		{"no certificate for too long, server answers: stop", rotationState{lastAvailable: long}, nil, true, false, "no valid client certificate", nil, long},
		{"no certificate for too long, server silent: wait", rotationState{lastAvailable: long}, nil, false, false, "", nil, long},
		{"expired, server answers: stop", rotationState{last: expired, lastAvailable: since}, expired, true, false, "expired", expired, since},
		{"expired, server silent: wait", rotationState{last: expired, lastAvailable: since}, expired, false, false, "", expired, testNow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state
			closeConns, err := s.observe(tc.cur, testNow, func() bool { return tc.healthy })
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
			}
			if closeConns != tc.wantClose || s.last != tc.wantLast || !s.lastAvailable.Equal(tc.wantAvailable) {
				t.Errorf("close %v last %p available %s; want %v %p %s", closeConns, s.last, s.lastAvailable, tc.wantClose, tc.wantLast, tc.wantAvailable)
			}
		})
	}
}

func TestNewRotationRefusesATransport(t *testing.T) {
	for _, cfg := range []*rest.Config{{Host: "https://x", Transport: http.DefaultTransport}, {Host: "https://x", Dial: (&net.Dialer{}).DialContext}} {
		if _, err := newRotation(cfg, &fakeManager{}, clocktesting.NewFakeClock(testNow)); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestRotationClosesOldConnections runs the transport's check loop: the
// handshake presents the manager's current certificate, and when it
// changes every connection made before is closed.
func TestRotationClosesOldConnections(t *testing.T) {
	m := &fakeManager{}
	m.cur.Store(tlsPair(t, newPair(t, "old", testNow.Add(-time.Hour), testNow.Add(time.Hour))))
	clk := clocktesting.NewFakeClock(testNow)
	cfg := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAData: newPair(t, "ca", testNow, testNow.Add(time.Hour)).cert}}
	r, err := newRotation(cfg, m, clk)
	if err != nil {
		t.Fatal(err)
	}
	tr := cfg.Transport.(*http.Transport)
	if got, _ := tr.TLSClientConfig.GetClientCertificate(nil); got != m.Current() {
		t.Error("the handshake does not present the manager's certificate")
	}
	if cfg.CAData != nil || tr.TLSClientConfig.RootCAs == nil {
		t.Error("the CA must move from the config into the transport")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			defer c.Close()
		}
	}()
	conn, err := tr.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.run(ctx) }()

	step := func() {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(defaultCheckPeriod)
	}
	step() // same certificate: the connection stays
	m.cur.Store(tlsPair(t, newPair(t, "new", testNow, testNow.Add(2*time.Hour))))
	step()
	step() // the check after the switch has run once this one waits
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err == nil {
		if _, err := conn.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("read on the old connection: %v, want closed", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

// TestRenewalPresentsTheCurrentCertificate: once the node has a client
// certificate, the Manager's renewal requests go through the rotating
// transport and present the certificate in use, including one the
// Manager switched to after the last renewal; before, the bootstrap
// credentials.
func TestRenewalPresentsTheCurrentCertificate(t *testing.T) {
	var seen atomic.Value // the CN of the last client certificate presented
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := "<none>"
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		if auth := r.Header.Get("Authorization"); auth != "" {
			cn += " " + auth
		}
		seen.Store(cn)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	m := &fakeManager{}
	rotating := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	r, err := newRotation(rotating, m, clocktesting.NewFakeClock(testNow))
	if err != nil {
		t.Fatal(err)
	}
	boot := &rest.Config{Host: srv.URL, BearerToken: "abcdef.0123456789abcdef", TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	clients := renewalClients(boot, rotating)
	ask := func(current *tls.Certificate) string {
		t.Helper()
		cs, err := clients(current)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			t.Fatal(err)
		}
		return seen.Load().(string)
	}
	if got := ask(nil); got != "<none> Bearer abcdef.0123456789abcdef" {
		t.Errorf("before the first certificate the request presented %q, want the bootstrap token only", got)
	}
	for _, cn := range []string{"system:node:first", "system:node:renewed"} {
		m.cur.Store(tlsPair(t, newPair(t, cn, testNow.Add(-time.Hour), testNow.Add(time.Hour))))
		r.dialer.CloseAll() // what run does when the certificate changes
		if got := ask(m.Current()); got != cn {
			t.Errorf("renewal presented %q, want the current certificate %q", got, cn)
		}
	}
}
