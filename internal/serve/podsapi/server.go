package podsapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	podsv1alpha1 "k8s.io/kubelet/pkg/apis/pods/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/serve/localgrpc"
)

// Upstream's endpoint (pkg/kubelet/apis/pods and its kubeletconfig
// defaults): <root-dir>/<DirName>/<Socket>.sock, and its rate limit.
const (
	DirName      = "pods-api"
	Socket       = "pods-api"
	DefaultQPS   = 100
	DefaultBurst = 10
)

// SocketPath is the socket under the root directory.
func SocketPath(rootDir string) string {
	return filepath.Join(rootDir, DirName, Socket+".sock")
}

// Config is what New needs; every field is required.
type Config struct {
	// RootDir is the kubelet's root directory (the socket is SocketPath's).
	RootDir string
	// Pods are the pods the kubelet wants (upstream's podManager.GetPods),
	// Pod one of them by UID.
	Pods func() []*corev1.Pod
	Pod  func(uid types.UID) (*corev1.Pod, bool)
	// Status is a pod's latest generated status (the status store).
	Status func(uid types.UID) (corev1.PodStatus, bool)
	// SourcesReady reports whether every pod source has been seen.
	SourcesReady func() bool
	Registerer   prometheus.Registerer
	Clock        clock.Clock
}

// Server is the Pods API server. Safe for concurrent use; the broadcaster
// owns the watchers, mu guards seen.
type Server struct {
	podsv1alpha1.UnsafePodsServer
	cfg     Config
	metrics *apiMetrics
	bc      *broadcaster
	seen    seenPods
}

// New validates cfg and registers the metrics. It starts nothing; events
// observed before Run are queued (up to the broadcaster's buffer).
func New(cfg Config) (*Server, error) {
	if cfg.RootDir == "" || cfg.Pods == nil || cfg.Pod == nil || cfg.Status == nil || cfg.SourcesReady == nil ||
		cfg.Registerer == nil || cfg.Clock == nil {
		return nil, errors.New("create pods API server: RootDir, Pods, Pod, Status, SourcesReady, Registerer and Clock are required")
	}
	m, err := newAPIMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("create pods API server: %w", err)
	}
	return &Server{cfg: cfg, metrics: m, bc: newBroadcaster(m.watchDropped), seen: seenPods{pods: map[types.UID]seenPod{}}}, nil
}

// GRPCServer returns a gRPC server with the Pods service, its unary calls
// rate limited then counted, its watches counted, as upstream's.
func (s *Server) GRPCServer() *grpc.Server {
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(localgrpc.RateLimit(localgrpc.NewLimiter(s.cfg.Clock, DefaultQPS, DefaultBurst)), s.metrics.unary),
		grpc.StreamInterceptor(s.metrics.stream),
	)
	podsv1alpha1.RegisterPodsServer(srv, s)
	return srv
}

// Run runs the broadcaster and serves the socket until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	l, err := localgrpc.Listen(SocketPath(s.cfg.RootDir))
	if err != nil {
		return fmt.Errorf("create listener for the pods API endpoint: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve runs the broadcaster and serves l until ctx ends (Run, on a
// listener made already).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	bcDone := make(chan struct{})
	go func() { s.bc.run(ctx); close(bcDone) }()
	err := localgrpc.Serve(ctx, s.cfg.Clock, "pods-api", SocketPath(s.cfg.RootDir), s.GRPCServer(), l)
	<-bcDone
	return err
}
