package streaming

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Runtime is the part of the CRI runtime service the handlers call;
// runtimeapi.RuntimeServiceClient satisfies it.
type Runtime interface {
	Exec(ctx context.Context, in *runtimeapi.ExecRequest, opts ...grpc.CallOption) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, in *runtimeapi.AttachRequest, opts ...grpc.CallOption) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, in *runtimeapi.PortForwardRequest, opts ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error)
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
}

var _ Runtime = runtimeapi.RuntimeServiceClient(nil)

// Config is what the streaming handlers need.
type Config struct {
	Runtime Runtime
	// Pod returns the pod berth runs with that namespace and name.
	Pod func(namespace, name string) (*corev1.Pod, bool)
	// RuntimePod returns the runtime's last view of the pod (the PLEG
	// cache); a pod the runtime does not hold has no containers.
	RuntimePod func(uid types.UID) *runtimestate.Pod
	// IdleTimeout is streamingConnectionIdleTimeout: a proxied stream
	// with no traffic either way for this long is closed. Zero means never.
	// (The runtime's streaming server has its own, e.g. containerd's
	// stream_idle_timeout.)
	IdleTimeout time.Duration
	// Clock measures idleness (required).
	Clock clock.Clock
}

// Server builds the streaming handlers. It holds no mutable state; its
// handlers are safe for concurrent use.
type Server struct {
	cfg Config
}

// New validates cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Runtime == nil || cfg.Pod == nil || cfg.RuntimePod == nil {
		return nil, errors.New("streaming: Runtime, Pod and RuntimePod are required")
	}
	if cfg.IdleTimeout < 0 {
		return nil, errors.New("streaming: IdleTimeout must not be negative")
	}
	if cfg.Clock == nil {
		return nil, errors.New("streaming: Clock is required")
	}
	return &Server{cfg: cfg}, nil
}

// httpError is an error with the HTTP status it is answered with.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

func notFound(format string, args ...any) error {
	return &httpError{code: http.StatusNotFound, err: fmt.Errorf(format, args...)}
}

// writeError answers err: its own status for an httpError, 404 for a CRI
// not-found, 500 for anything else (as upstream's streaming.WriteError).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	switch {
	case errors.As(err, &he):
		code = he.code
	case errors.Is(err, cri.ErrNotFound):
		code = http.StatusNotFound
	}
	if code == http.StatusInternalServerError {
		klog.FromContext(r.Context()).Error(err, "Streaming request failed", "path", r.URL.Path)
	}
	http.Error(w, err.Error(), code)
}

// target is what a request resolves to.
type target struct {
	pod         *corev1.Pod
	containerID string
}

// findPod finds the pod a request names; a UID in the path must match.
func (s *Server) findPod(r *http.Request) (*corev1.Pod, error) {
	pod, ok := s.cfg.Pod(r.PathValue("namespace"), r.PathValue("pod"))
	if !ok {
		return nil, notFound("pod does not exist")
	}
	if uid := types.UID(r.PathValue("uid")); uid != "" && uid != pod.UID {
		return nil, notFound("pod not found")
	}
	return pod, nil
}

// findContainer resolves the request's pod and running container.
func (s *Server) findContainer(r *http.Request) (target, error) {
	pod, err := s.findPod(r)
	if err != nil {
		return target{}, err
	}
	name := r.PathValue("container")
	for _, c := range s.cfg.RuntimePod(pod.UID).ContainersNamed(name) {
		if c.State == runtimestate.ContainerRunning {
			return target{pod: pod, containerID: c.ID}, nil
		}
	}
	return target{}, notFound("container not found (%q)", name)
}

// proxyTo proxies the upgrade request to the runtime's streaming URL.
func (s *Server) proxyTo(w http.ResponseWriter, r *http.Request, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		writeError(w, r, fmt.Errorf("parse streaming URL %q: %w", rawURL, err))
		return
	}
	h := proxy.NewUpgradeAwareHandler(u, nil, false, true, responder{})
	if s.cfg.IdleTimeout > 0 {
		w = &idleWriter{ResponseWriter: w, ctx: r.Context(), clock: s.cfg.Clock, timeout: s.cfg.IdleTimeout}
	}
	h.ServeHTTP(w, r)
}

// responder answers proxy failures with 500, as upstream.
type responder struct{}

func (responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	klog.FromContext(r.Context()).Error(err, "Error while proxying request")
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
