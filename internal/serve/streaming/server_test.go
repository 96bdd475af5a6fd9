package streaming

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// fakeRuntime records the streaming requests and answers with url.
type fakeRuntime struct {
	url string
	err error

	mu   sync.Mutex
	reqs []any
	sync *runtimeapi.ExecSyncResponse
}

func (f *fakeRuntime) record(req any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
}

func (f *fakeRuntime) requests() []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]any(nil), f.reqs...)
}

func (f *fakeRuntime) Exec(_ context.Context, in *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	f.record(in)
	return &runtimeapi.ExecResponse{Url: f.url}, f.err
}

func (f *fakeRuntime) Attach(_ context.Context, in *runtimeapi.AttachRequest, _ ...grpc.CallOption) (*runtimeapi.AttachResponse, error) {
	f.record(in)
	return &runtimeapi.AttachResponse{Url: f.url}, f.err
}

func (f *fakeRuntime) PortForward(_ context.Context, in *runtimeapi.PortForwardRequest, _ ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error) {
	f.record(in)
	return &runtimeapi.PortForwardResponse{Url: f.url}, f.err
}

func (f *fakeRuntime) ExecSync(_ context.Context, in *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	f.record(in)
	return f.sync, f.err
}

// upgradeBackend is a streaming server stand-in: it switches protocols
// and echoes what it reads, after sending the request line and protocol
// header it got.
func upgradeBackend(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		proto := r.Header.Get("X-Stream-Protocol-Version")
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n" +
			"X-Stream-Protocol-Version: " + proto + "\r\n\r\n" + r.URL.Path + "\n")
		_ = rw.Flush()
		_, _ = io.Copy(conn, rw)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestServer(t *testing.T, rt *fakeRuntime) http.Handler {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", TTY: true}, {Name: "stopped"}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debugger", Stdin: true, TTY: true}}},
		},
	}
	rtPod := &runtimestate.Pod{
		UID:       "u1",
		Sandboxes: []runtimestate.Sandbox{{ID: "sb1", State: runtimestate.SandboxReady}},
		Containers: []runtimestate.Container{
			{ID: "c2", Name: "app", State: runtimestate.ContainerRunning},
			{ID: "c1", Name: "app", State: runtimestate.ContainerExited},
			{ID: "s1", Name: "stopped", State: runtimestate.ContainerExited},
			{ID: "d1", Name: "debugger", State: runtimestate.ContainerRunning},
		},
	}
	s, err := New(Config{Clock: clock.RealClock{},
		Runtime: rt,
		// Every proxied stream goes through the idle-timeout wrapper.
		IdleTimeout: time.Hour,
		Pod: func(ns, name string) (*corev1.Pod, bool) {
			return pod, ns == "default" && name == "web"
		},
		RuntimePod: func(uid types.UID) *runtimestate.Pod {
			if uid == "u1" {
				return rtPod
			}
			return &runtimestate.Pod{UID: uid}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/exec/{namespace}/{pod}/{container}", "/exec/{namespace}/{pod}/{uid}/{container}"} {
		mux.Handle(p, s.Exec())
	}
	for _, p := range []string{"/attach/{namespace}/{pod}/{container}", "/attach/{namespace}/{pod}/{uid}/{container}"} {
		mux.Handle(p, s.Attach())
	}
	for _, p := range []string{"/portForward/{namespace}/{pod}", "/portForward/{namespace}/{pod}/{uid}"} {
		mux.Handle(p, s.PortForward())
	}
	for _, p := range []string{"POST /run/{namespace}/{pod}/{container}", "POST /run/{namespace}/{pod}/{uid}/{container}"} {
		mux.Handle(p, s.Run())
	}
	return mux
}

// upgrade sends an SPDY upgrade request for path through front and
// returns the status line, the echoed backend path and an echo check.
func upgrade(t *testing.T, front *httptest.Server, path string) (status, backendPath, echo string) {
	t.Helper()
	u, _ := url.Parse(front.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: "+u.Host+"\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"+
		"X-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body), "", ""
	}
	if got := resp.Header.Get("X-Stream-Protocol-Version"); got != "v4.channel.k8s.io" {
		t.Errorf("protocol header = %q, want it passed both ways", got)
	}
	line, _ := br.ReadString('\n')
	_, _ = io.WriteString(conn, "ping\n")
	echo, _ = br.ReadString('\n')
	return resp.Status, strings.TrimSpace(line), strings.TrimSpace(echo)
}

func TestStreamingProxies(t *testing.T) {
	backend := upgradeBackend(t)
	tests := []struct {
		name    string
		path    string
		wantReq any
	}{
		{name: "exec", path: "/exec/default/web/app?command=sh&command=-c&command=date&input=1&output=1&tty=1&error=1",
			wantReq: &runtimeapi.ExecRequest{ContainerId: "c2", Cmd: []string{"sh", "-c", "date"}, Stdin: true, Stdout: true, Tty: true}},
		{name: "exec with uid", path: "/exec/default/web/u1/app?command=ls&output=1&error=1",
			wantReq: &runtimeapi.ExecRequest{ContainerId: "c2", Cmd: []string{"ls"}, Stdout: true, Stderr: true}},
		{name: "attach takes the container's tty", path: "/attach/default/web/app?input=1&output=1",
			wantReq: &runtimeapi.AttachRequest{ContainerId: "c2", Stdin: true, Stdout: true, Tty: true}},
		{name: "attach to an ephemeral container (kubectl debug -it) takes its tty", path: "/attach/default/web/debugger?input=1&output=1",
			wantReq: &runtimeapi.AttachRequest{ContainerId: "d1", Stdin: true, Stdout: true, Tty: true}},
		{name: "exec in an ephemeral container", path: "/exec/default/web/debugger?command=ps&output=1&error=1",
			wantReq: &runtimeapi.ExecRequest{ContainerId: "d1", Cmd: []string{"ps"}, Stdout: true, Stderr: true}},
		{name: "port-forward", path: "/portForward/default/web",
			wantReq: &runtimeapi.PortForwardRequest{PodSandboxId: "sb1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{url: backend.URL + "/stream/token1"}
			front := httptest.NewServer(newTestServer(t, rt))
			defer front.Close()
			status, backendPath, echo := upgrade(t, front, tc.path)
			if !strings.HasPrefix(status, "101") || backendPath != "/stream/token1" || echo != "ping" {
				t.Fatalf("status %q, backend path %q, echo %q", status, backendPath, echo)
			}
			if diff := cmp.Diff([]any{tc.wantReq}, rt.requests(), protocmp.Transform()); diff != "" {
				t.Errorf("CRI requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamingErrors(t *testing.T) {
	backend := upgradeBackend(t)
	tests := []struct {
		name     string
		path     string
		err      error
		wantCode int
		wantBody string
	}{
		{name: "no stream", path: "/exec/default/web/app?command=ls&stdout=1", wantCode: 400, wantBody: "you must specify at least 1 of stdin, stdout, stderr"},
		{name: "unknown pod", path: "/exec/default/nope/app?output=1", wantCode: 404, wantBody: "pod does not exist"},
		{name: "wrong uid", path: "/exec/default/web/u9/app?output=1", wantCode: 404, wantBody: "pod not found"},
		{name: "container not running", path: "/exec/default/web/stopped?output=1", wantCode: 404, wantBody: `container not found ("stopped")`},
		{name: "unknown container", path: "/attach/default/web/db?output=1", wantCode: 404, wantBody: `container not found ("db")`},
		{name: "runtime not found", path: "/exec/default/web/app?output=1", err: fmt.Errorf("gone: %w", cri.ErrNotFound), wantCode: 404, wantBody: "gone"},
		{name: "runtime failure", path: "/exec/default/web/app?output=1", err: errors.New("boom"), wantCode: 500, wantBody: "boom"},
		{name: "no sandbox", path: "/portForward/default/web/u2", wantCode: 404, wantBody: "pod not found"},
		// As upstream: the proxy's refusal goes through the responder, a 500.
		{name: "upgrade required", path: "/exec/default/web/app?output=1", wantCode: 500, wantBody: "Upgrade request required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{url: backend.URL, err: tc.err}
			h := newTestServer(t, rt)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, nil))
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		resp     *runtimeapi.ExecSyncResponse
		err      error
		wantCode int
		wantBody string
	}{
		{name: "combined output", resp: &runtimeapi.ExecSyncResponse{Stdout: []byte("out\n"), Stderr: []byte("err\n")}, wantCode: 200, wantBody: "out\nerr\n"},
		{name: "no output", resp: &runtimeapi.ExecSyncResponse{}, wantCode: 200, wantBody: ""},
		{name: "non-zero exit", resp: &runtimeapi.ExecSyncResponse{ExitCode: 3, Stderr: []byte("bad")}, wantCode: 500,
			wantBody: "command 'echo hi there' exited with 3: bad"},
		{name: "runtime error", err: fmt.Errorf("no such container: %w", cri.ErrNotFound), wantCode: 404, wantBody: "no such container"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{sync: tc.resp, err: tc.err}
			rec := httptest.NewRecorder()
			newTestServer(t, rt).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app?cmd=echo+hi+there", nil))
			if rec.Code != tc.wantCode || (tc.wantCode == 200 && rec.Body.String() != tc.wantBody) || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
			want := []any{&runtimeapi.ExecSyncRequest{ContainerId: "c2", Cmd: []string{"echo", "hi", "there"}}}
			if diff := cmp.Diff(want, rt.requests(), protocmp.Transform()); diff != "" {
				t.Errorf("CRI requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePorts(t *testing.T) {
	ws := func(q string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/portForward/ns/p?"+q, nil)
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Connection", "keep-alive, Upgrade")
		return r
	}
	tests := []struct {
		name    string
		req     *http.Request
		want    []int32
		wantErr bool
	}{
		{name: "spdy has no ports in the query", req: httptest.NewRequest(http.MethodPost, "/portForward/ns/p?port=80", nil)},
		{name: "websocket ports", req: ws("port=80&port=8080,9090"), want: []int32{80, 8080, 9090}},
		{name: "websocket needs a port", req: ws(""), wantErr: true},
		{name: "websocket bad port", req: ws("port=http"), wantErr: true},
		{name: "websocket zero port", req: ws("port=0"), wantErr: true},
		{name: "websocket port too big", req: ws("port=70000"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePorts(tc.req)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStreamOptions(t *testing.T) {
	tests := []struct {
		query   string
		want    streamOptions
		wantErr bool
	}{
		{query: "input=1&output=1&error=1", want: streamOptions{Stdin: true, Stdout: true, Stderr: true}},
		{query: "output=1&error=1&tty=1", want: streamOptions{Stdout: true, TTY: true}},
		{query: "output=true", wantErr: true},
		{query: "tty=1", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			got, err := parseStreamOptions(q)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
