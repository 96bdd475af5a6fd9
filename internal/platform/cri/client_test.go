package cri_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type observation struct {
	Method  string
	Request any
	Start   time.Time
	Err     error
}

// recorder collects Observe reports.
type recorder struct {
	mu  sync.Mutex
	obs []observation
}

func (r *recorder) observe(c cri.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs = append(r.obs, observation{c.Method, c.Request, c.Start, c.Err})
}

func TestInterceptorClassifiesAndObserves(t *testing.T) {
	f := crifake.New(clocktesting.NewFakeClock(epoch))
	rec := &recorder{}
	c := f.ClientWithOptions(t, cri.Options{Timeout: time.Minute, Observe: rec.observe, Clock: clocktesting.NewFakePassiveClock(epoch)})
	ctx := context.Background()

	f.InjectError("Version", cri.StatusError(cri.ErrUnavailable, "connection refused"))
	_, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
	if !errors.Is(err, cri.ErrUnavailable) || !strings.Contains(err.Error(), "cri Version: runtime unavailable: connection refused") {
		t.Errorf("Version with injected Unavailable: %v", err)
	}
	_, err = c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
	var criErr *cri.Error
	if !errors.Is(err, cri.ErrNotFound) || !errors.As(err, &criErr) || criErr.Method != "ContainerStatus" {
		t.Errorf("ContainerStatus of an unknown container: %v", err)
	}
	if _, err := c.Image.ListImages(ctx, &runtimeapi.ListImagesRequest{}); err != nil {
		t.Fatalf("ListImages: %v", err)
	}
	_, err = c.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: "x", Timeout: 1})
	if !errors.Is(err, cri.ErrUnimplemented) {
		t.Errorf("ExecSync on the fake: %v, want cri.ErrUnimplemented", err)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var methods []string
	for _, o := range rec.obs {
		methods = append(methods, o.Method)
	}
	if diff := cmp.Diff([]string{"Version", "ContainerStatus", "ListImages", "ExecSync"}, methods); diff != "" {
		t.Errorf("observed methods (-want +got):\n%s", diff)
	}
	if !errors.Is(rec.obs[0].Err, cri.ErrUnavailable) || rec.obs[2].Err != nil {
		t.Errorf("observed errors = %v", rec.obs)
	}
	if req, ok := rec.obs[1].Request.(*runtimeapi.ContainerStatusRequest); !ok || req.GetContainerId() != "nope" {
		t.Errorf("observed request of ContainerStatus = %#v, want the ContainerStatusRequest sent", rec.obs[1].Request)
	}
	if !rec.obs[0].Start.Equal(epoch) {
		t.Errorf("observed start = %v, want %v", rec.obs[0].Start, epoch)
	}
}

// deadlineServer records whether calls carried a deadline and how far it was.
type deadlineServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	version string

	mu        sync.Mutex
	remaining map[string]time.Duration // -1: no deadline
}

func (s *deadlineServer) note(ctx context.Context, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	s.remaining[method] = d
}

func (s *deadlineServer) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	s.note(ctx, "Version")
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "odd", RuntimeVersion: "1", RuntimeApiVersion: s.version}, nil
}

func (s *deadlineServer) StopContainer(ctx context.Context, _ *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s.note(ctx, "StopContainer")
	return &runtimeapi.StopContainerResponse{}, nil
}

func (s *deadlineServer) PullImage(ctx context.Context, _ *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	s.note(ctx, "PullImage")
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:1"}, nil
}

func serveDeadlines(t *testing.T, version string, timeout time.Duration) (*deadlineServer, *cri.Client) {
	srv := &deadlineServer{version: version, remaining: map[string]time.Duration{}}
	lis := bufconn.Listen(1 << 16)
	gs := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(gs, srv)
	runtimeapi.RegisterImageServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	conn, err := grpc.NewClient("passthrough:///test", append(cri.DialOptions(cri.Options{Timeout: timeout}), grpc.WithContextDialer(dial))...)
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	c := cri.NewForConns(conn, nil)
	t.Cleanup(func() {
		_ = c.Close()
		gs.Stop()
	})
	return srv, c
}

func TestInterceptorTimeouts(t *testing.T) {
	const timeout = time.Hour
	srv, c := serveDeadlines(t, "v1", timeout)
	ctx := context.Background()
	if _, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{Timeout: 3600}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Image.PullImage(ctx, &runtimeapi.PullImageRequest{}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	got := srv.remaining
	srv.mu.Unlock()
	// Deadlines are compared in whole hours: the call itself takes a moment.
	within := func(d, want time.Duration) bool { return d <= want && d > want-time.Minute }
	if !within(got["Version"], timeout) {
		t.Errorf("Version deadline in %v, want about %v", got["Version"], timeout)
	}
	if !within(got["StopContainer"], 2*timeout) {
		t.Errorf("StopContainer deadline in %v, want about %v", got["StopContainer"], 2*timeout)
	}
	if got["PullImage"] != -1 {
		t.Errorf("PullImage deadline in %v, want none", got["PullImage"])
	}

	// An earlier deadline of the caller stands.
	short, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := c.Runtime.Version(short, &runtimeapi.VersionRequest{}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if d := srv.remaining["Version"]; d > time.Minute || d <= 0 {
		t.Errorf("Version with a 1m caller deadline: deadline in %v", d)
	}
}

func TestVerifyRejectsOtherAPIVersions(t *testing.T) {
	_, c := serveDeadlines(t, "v1alpha2", time.Minute)
	_, err := c.Verify(context.Background())
	if err == nil || !strings.Contains(err.Error(), `speaks CRI "v1alpha2"`) {
		t.Errorf("Verify against a v1alpha2 runtime: %v", err)
	}
}

func TestStreamErrorsAreClassified(t *testing.T) {
	f := crifake.New(clocktesting.NewFakeClock(epoch))
	c := f.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	var criErr *cri.Error
	if !errors.Is(err, cri.ErrUnimplemented) || !errors.As(err, &criErr) || criErr.Method != "GetContainerEvents" {
		t.Errorf("GetContainerEvents on the fake: %v, want a classified Unimplemented", err)
	}
}
