package crifake

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// DefaultTimeout is the runtime request timeout of clients made by Client.
const DefaultTimeout = 30 * time.Second

// Client serves the fake over an in-process gRPC connection and returns a
// client for it built with the production dial options (timeouts, error
// classification), with DefaultTimeout. Server and connection are closed by
// t.Cleanup.
func (f *Fake) Client(t testing.TB) *cri.Client {
	t.Helper()
	return f.ClientWithOptions(t, cri.Options{Timeout: DefaultTimeout})
}

// ClientWithOptions is Client with the given Timeout, Observe and Clock;
// the endpoints in o are ignored.
func (f *Fake) ClientWithOptions(t testing.TB, o cri.Options) *cri.Client {
	t.Helper()
	c, closeFn, err := f.dial(o, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return c
}

// Dial serves the fake over an in-process gRPC connection, as Client does,
// for code that runs the fake outside a test (berth simulate). closeFn
// closes the client and stops the server; call it once.
func (f *Fake) Dial(o cri.Options) (client *cri.Client, closeFn func(), err error) {
	// A small pipe buffer: a simulated node's messages are small, and
	// bufconn allocates the buffer up front, twice per connection.
	return f.dial(o, 64<<10)
}

func (f *Fake) dial(o cri.Options, bufSize int) (*cri.Client, func(), error) {
	lis := bufconn.Listen(bufSize)
	srv := f.serve(lis)
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	opts := append(cri.DialOptions(o), grpc.WithContextDialer(dial))
	conn, err := grpc.NewClient("passthrough:///crifake", opts...)
	if err != nil {
		srv.Stop()
		return nil, nil, fmt.Errorf("create client for fake runtime: %w", err)
	}
	c := cri.NewForConns(conn, nil)
	return c, func() {
		_ = c.Close()
		srv.Stop()
	}, nil
}

// Endpoint serves the fake on a unix socket in a fresh temporary directory
// and returns its endpoint in upstream form ("unix:///tmp/.../cri.sock"),
// for tests of code that dials an endpoint itself. Server and directory are
// removed by t.Cleanup.
func (f *Fake) Endpoint(t testing.TB) string {
	t.Helper()
	// t.TempDir paths can exceed the 108-byte limit of socket paths.
	dir, err := os.MkdirTemp("", "crifake")
	if err != nil {
		t.Fatalf("create socket directory: %v", err)
	}
	sock := filepath.Join(dir, "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("listen on %s: %v", sock, err)
	}
	srv := f.serve(lis)
	t.Cleanup(func() {
		srv.Stop()
		_ = os.RemoveAll(dir)
	})
	return "unix://" + sock
}

// serve starts a gRPC server for the fake on lis.
func (f *Fake) serve(lis net.Listener) *grpc.Server {
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(f.intercept), grpc.ChainStreamInterceptor(f.interceptStream))
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	return srv
}

// intercept logs every call and answers with an injected error if there is
// one for the method.
func (f *Fake) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	if err := f.record(method); err != nil {
		return nil, err
	}
	if err := f.delay(ctx, method); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// interceptStream logs and injects errors for streams as intercept does
// for unary calls.
func (f *Fake) interceptStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	if err := f.record(method); err != nil {
		return err
	}
	return handler(srv, ss)
}

// record appends method to the call log and pops its next injected error.
func (f *Fake) record(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.knobs.sim.noCallLog {
		f.calls = append(f.calls, method)
	}
	queue := f.injections[method]
	if len(queue) == 0 {
		if fl := f.knobs.sim.failures[method]; fl != nil && fl.fails() {
			return fl.err
		}
		return nil
	}
	err := queue[0]
	if len(queue) == 1 {
		delete(f.injections, method)
	} else {
		f.injections[method] = queue[1:]
	}
	return err
}
