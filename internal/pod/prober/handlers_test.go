package prober

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/httpget"
)

func TestClassifyHTTP(t *testing.T) {
	tests := []struct {
		code int
		want outcome
		out  string
	}{
		{200, outcomeSuccess, "body"},
		{204, outcomeSuccess, "body"},
		{299, outcomeSuccess, "body"},
		{301, outcomeWarning, "Probe terminated redirects, Response body: body"},
		{399, outcomeWarning, "Probe terminated redirects, Response body: body"},
		{400, outcomeFailure, "HTTP probe failed with statuscode: 400"},
		{500, outcomeFailure, "HTTP probe failed with statuscode: 500"},
		{199, outcomeFailure, "HTTP probe failed with statuscode: 199"},
	}
	for _, tt := range tests {
		o, out := classifyHTTP(tt.code, "body")
		if o != tt.want || out != tt.out {
			t.Errorf("classifyHTTP(%d) = %v, %q; want %v, %q", tt.code, o, out, tt.want, tt.out)
		}
	}
}

func TestHTTPProbe(t *testing.T) {
	const ua = "kube-probe/1.37"
	var gotUA string
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { gotUA = r.UserAgent(); fmt.Fprint(w, "fine") })
	mux.HandleFunc("/bad", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "secret", http.StatusInternalServerError) })
	mux.HandleFunc("/local", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	tests := []struct {
		path string
		want outcome
		out  string
	}{
		{"/ok", outcomeSuccess, "fine"},
		{"/bad", outcomeFailure, "HTTP probe failed with statuscode: 500"},
		{"/local", outcomeSuccess, "fine"},
		{"/away", outcomeWarning, "Probe terminated redirects, Response body: "},
		{"/loop", outcomeFailure, "stopped after 10 redirects"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			req, err := httpget.NewRequest(context.Background(), &corev1.HTTPGetAction{Path: tt.path, Port: intstr.FromInt32(int32(port))},
				&corev1.Container{}, u.Hostname(), ua)
			if err != nil {
				t.Fatal(err)
			}
			o, out, err := httpProbe(newTransport(), req, 5*time.Second)
			if err != nil || o != tt.want || !strings.Contains(out, tt.out) {
				t.Errorf("httpProbe(%s) = %v, %q, %v; want %v, %q", tt.path, o, out, err, tt.want, tt.out)
			}
		})
	}
	if gotUA != ua {
		t.Errorf("User-Agent %q, want %q", gotUA, ua)
	}
}

type fakeExec struct {
	req  *runtimeapi.ExecSyncRequest
	resp *runtimeapi.ExecSyncResponse
	err  error
}

func (f *fakeExec) ExecSync(_ context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	f.req = in
	return f.resp, f.err
}

func TestExecProbe(t *testing.T) {
	long := strings.Repeat("x", maxOutput+10)
	tests := []struct {
		name    string
		resp    *runtimeapi.ExecSyncResponse
		err     error
		want    outcome
		out     string
		wantErr bool
	}{
		{"exit 0", &runtimeapi.ExecSyncResponse{Stdout: []byte("out"), Stderr: []byte("err")}, nil, outcomeSuccess, "outerr", false},
		{"exit 1", &runtimeapi.ExecSyncResponse{ExitCode: 1, Stdout: []byte("no")}, nil, outcomeFailure, "no", false},
		{"output truncated", &runtimeapi.ExecSyncResponse{ExitCode: 2, Stdout: []byte(long)}, nil, outcomeFailure, long[:maxOutput], false},
		{"timeout", nil, fmt.Errorf("ExecSync: %w", cri.ErrDeadlineExceeded), outcomeFailure, `command "cat /tmp/ok" timed out`, false},
		{"runtime error", nil, fmt.Errorf("ExecSync: %w", cri.ErrNotFound), outcomeUnknown, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeExec{resp: tt.resp, err: tt.err}
			o, out, err := execProbe(context.Background(), f, "cid", []string{"cat", "/tmp/ok"}, 3)
			if o != tt.want || out != tt.out || (err != nil) != tt.wantErr {
				t.Errorf("execProbe = %v, %q, %v; want %v, %q, err %v", o, out, err, tt.want, tt.out, tt.wantErr)
			}
			want := &runtimeapi.ExecSyncRequest{ContainerId: "cid", Cmd: []string{"cat", "/tmp/ok"}, Timeout: 3}
			if diff := cmp.Diff(want.String(), f.req.String()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandStatic(t *testing.T) {
	env := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{}}}
	got := expandStatic([]string{"$(A)", "$(B)", "$(C)", "$$(A)", "x$", "$(A"}, env)
	want := []string{"1", "", "$(C)", "$(A)", "x$", "$(A"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expandStatic (-want +got):\n%s", diff)
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if o, _, err := tcpProbe(context.Background(), "127.0.0.1", port, time.Second); o != outcomeSuccess || err != nil {
		t.Errorf("open port: %v, %v", o, err)
	}
	l.Close()
	if o, out, err := tcpProbe(context.Background(), "127.0.0.1", port, time.Second); o != outcomeFailure || err != nil || !strings.Contains(out, "refused") {
		t.Errorf("closed port: %v, %q, %v", o, out, err)
	}
}

func TestGRPCProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	port := l.Addr().(*net.TCPAddr).Port
	tests := []struct {
		service string
		want    outcome
		out     string
	}{
		{"", outcomeSuccess, "service healthy"},
		{"down", outcomeFailure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown", outcomeFailure, "error: health rpc probe failed"},
	}
	for _, tt := range tests {
		o, out, err := grpcProbe(context.Background(), "127.0.0.1", port, tt.service, "kube-probe/test", 5*time.Second)
		if o != tt.want || err != nil || !strings.Contains(out, tt.out) {
			t.Errorf("grpcProbe(%q) = %v, %q, %v; want %v, %q", tt.service, o, out, err, tt.want, tt.out)
		}
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l2.Addr().(*net.TCPAddr).Port
	l2.Close()
	if o, out, _ := grpcProbe(context.Background(), "127.0.0.1", closed, "", "kube-probe/test", 200*time.Millisecond); o != outcomeFailure || !strings.HasPrefix(out, "timeout: failed to connect service") {
		t.Errorf("closed port: %v, %q", o, out)
	}
}
