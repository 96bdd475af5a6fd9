package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
)

func TestHealthz(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		err      error
		wantCode int
		wantBody string
	}{
		{name: "healthy", method: http.MethodGet, wantCode: 200, wantBody: "ok"},
		{name: "unhealthy", method: http.MethodGet, err: errors.New("PLEG is not healthy"), wantCode: 500, wantBody: "PLEG is not healthy"},
		{name: "post refused", method: http.MethodPost, wantCode: 405, wantBody: "method not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := HealthzHandler(func() error { return tc.err })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/healthz", nil))
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestPods(t *testing.T) {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node", Namespace: "default", UID: "u1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.88.0.5"},
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
	}{
		{name: "none", pods: nil},
		{name: "one", pods: []corev1.Pod{pod}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ReadOnlyHandler(func() error { return nil }, func() []corev1.Pod { return tc.pods }, Handlers{})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pods", nil))
			if rec.Code != 200 {
				t.Fatalf("code %d: %s", rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), `"items":[`) {
				t.Errorf("items must be a list, got %s", rec.Body)
			}
			var got corev1.PodList
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Kind != "PodList" || got.APIVersion != "v1" {
				t.Errorf("type meta = %v", got.TypeMeta)
			}
			want := tc.pods
			if want == nil {
				want = []corev1.Pod{}
			}
			if diff := cmp.Diff(want, got.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultTimeouts pins the limits every server gets to upstream's
// (pkg/kubelet/server/server.go ListenAndServeKubeletServer), plus the
// header timeout upstream lacks.
func TestDefaultTimeouts(t *testing.T) {
	want := timeouts{
		ReadHeader:     10 * time.Second,
		Read:           4 * time.Hour,
		Write:          4 * time.Hour,
		Idle:           90 * time.Second,
		MaxHeaderBytes: 1 << 20,
	}
	if diff := cmp.Diff(want, defaultTimeouts()); diff != "" {
		t.Errorf("defaultTimeouts (-want +got):\n%s", diff)
	}
	srv := newHTTPServer(context.Background(), http.NotFoundHandler(), want)
	got := timeouts{ReadHeader: srv.ReadHeaderTimeout, Read: srv.ReadTimeout, Write: srv.WriteTimeout,
		Idle: srv.IdleTimeout, MaxHeaderBytes: srv.MaxHeaderBytes}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("http.Server limits (-want +got):\n%s", diff)
	}
}

// startServer serves HealthzHandler on a loopback port with the given
// limits and returns its address.
func startServer(t *testing.T, lim timeouts) string {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveListener(ctx, "test", ln, HealthzHandler(func() error { return nil }), lim) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveListener: %v", err)
		}
	})
	return ln.Addr().String()
}

// waitClosed reads from conn until the server closes it, failing the test
// if that takes longer than the wait (far above the limits under test).
func waitClosed(t *testing.T, conn net.Conn, r io.Reader) {
	t.Helper()
	const wait = 10 * time.Second
	if err := conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("server kept the connection open for %v", wait)
	}
}

func TestServerClosesIdleConnection(t *testing.T) {
	addr := startServer(t, timeouts{ReadHeader: time.Minute, Idle: 50 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("first request: %d %q (close %v), want a kept-alive 200", resp.StatusCode, body, resp.Close)
	}
	// The connection now sits idle: the server must hang up.
	waitClosed(t, conn, br)
}

func TestServerCutsSlowHeaders(t *testing.T) {
	addr := startServer(t, timeouts{ReadHeader: 50 * time.Millisecond, Idle: time.Minute})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers that never end.
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: node\r\n"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, conn, conn)
}
