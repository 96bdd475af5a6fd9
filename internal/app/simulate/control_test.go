package simulate

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHandlerRefusals: the control API of a Sim with no node lists none,
// and refuses a bad index and the removal of a node that does not run
// without asking the API server anything (it is unreachable here).
func TestHandlerRefusals(t *testing.T) {
	cfg := testConfig(t)
	cfg.Nodes = 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodGet, "/nodes", http.StatusOK, `{"nodes":[]}`},
		{http.MethodDelete, "/nodes/3", http.StatusNotFound, "node sim-3 does not run"},
		{http.MethodPost, "/nodes/x", http.StatusBadRequest, `node index "x"`},
		{http.MethodPost, "/nodes/-1", http.StatusBadRequest, `node index "-1"`},
		{http.MethodPut, "/nodes/1", http.StatusMethodNotAllowed, ""},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s = %d %q; want %d with %q", tc.method, tc.path, resp.StatusCode, b, tc.code, tc.body)
		}
	}
}

// TestRunControlAddress: Run serves the control API on ControlAddress,
// and fails at once, naming it, when it cannot listen there.
func TestRunControlAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := testConfig(t)
	cfg.Nodes = 0
	cfg.ControlAddress = l.Addr().String() // taken
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "control address") {
		t.Fatalf("Run on a taken address: %v; want a control address error", err)
	}

	addr := l.Addr().String()
	l.Close()
	cfg.ControlAddress = addr
	if s, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var resp *http.Response
	for range 100 {
		if resp, err = http.Get("http://" + addr + "/nodes"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("GET /nodes: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != `{"nodes":[]}` {
		t.Errorf("GET /nodes = %d %q", resp.StatusCode, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/nodes"); err == nil {
		t.Error("the control API still serves after Run returned")
	}
}
