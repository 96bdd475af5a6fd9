package podresources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/kubelet/pkg/apis/podresources/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/serve/localgrpc"
)

// Upstream's endpoint (pkg/kubelet/apis/podresources and its
// kubeletconfig defaults): <root-dir>/<DirName>/<Socket>.sock, and the rate
// limit of its gRPC server.
const (
	DirName      = "pod-resources"
	Socket       = "kubelet"
	DefaultQPS   = 100
	DefaultBurst = 10
)

// SocketPath is the socket under the root directory.
func SocketPath(rootDir string) string {
	return filepath.Join(rootDir, DirName, Socket+".sock")
}

// Pods is the kubelet's view of its pods.
type Pods interface {
	// ActivePods are the pods that still count against the node
	// (upstream's GetActivePods).
	ActivePods() []*corev1.Pod
	// AllPods are every pod the kubelet wants (upstream's
	// podManager.GetPods), terminal ones included.
	AllPods() []*corev1.Pod
	// ActivePod finds an active pod by namespace and name.
	ActivePod(namespace, name string) (*corev1.Pod, bool)
}

// CPUs is the CPU manager's view.
type CPUs interface {
	// ExclusiveCPUs are the CPUs the container holds alone (none on the
	// shared pool).
	ExclusiveCPUs(podUID, container string) []int64
	// AllocatableCPUs are the CPUs exclusive allocations may come from.
	AllocatableCPUs() []int64
}

// Memory is the memory manager's view: memory blocks per NUMA node.
type Memory interface {
	ContainerMemory(podUID, container string) []*podresourcesv1.ContainerMemory
	AllocatableMemory() []*podresourcesv1.ContainerMemory
}

// Devices is the device manager's view.
type Devices interface {
	GetDevices(podUID, containerName string) []*podresourcesv1.ContainerDevices
	GetAllocatableDevices() []*podresourcesv1.ContainerDevices
}

// allocatedDevicesUpdater is the device manager's optional freeing of the
// devices of terminated pods, which upstream's List calls first.
type allocatedDevicesUpdater interface {
	UpdateAllocatedDevices(ctx context.Context)
}

// DynamicResources is the DRA manager's view: the claims' devices a
// container uses.
type DynamicResources interface {
	GetDynamicResources(pod *corev1.Pod, container *corev1.Container) []*podresourcesv1.DynamicResource
}

// Config is what New needs; every field is required.
type Config struct {
	// RootDir is the kubelet's root directory (the socket is SocketPath's).
	RootDir string
	Pods    Pods
	CPUs    CPUs
	Memory  Memory
	Devices Devices
	Dynamic DynamicResources
	// UseActivePods is the KubeletPodResourcesListUseActivePods gate: List
	// shows the active pods only (on, the default) or every pod.
	UseActivePods bool
	// Registerer takes the endpoint's metrics.
	Registerer prometheus.Registerer
	Clock      clock.Clock
}

// Server is the pod resources server. It holds no per-pod state; every
// call reads the providers. Safe for concurrent use.
type Server struct {
	cfg     Config
	metrics *endpointMetrics
	v1      *v1Server
}

// New validates cfg and registers the metrics. It starts nothing.
func New(cfg Config) (*Server, error) {
	if cfg.RootDir == "" || cfg.Pods == nil || cfg.CPUs == nil || cfg.Memory == nil || cfg.Devices == nil ||
		cfg.Dynamic == nil || cfg.Registerer == nil || cfg.Clock == nil {
		return nil, errors.New("create pod resources server: RootDir, Pods, CPUs, Memory, Devices, Dynamic, Registerer and Clock are required")
	}
	m, err := newEndpointMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("create pod resources server: %w", err)
	}
	return &Server{cfg: cfg, metrics: m, v1: &v1Server{cfg: &cfg, metrics: m}}, nil
}

// GRPCServer returns a gRPC server with both services, rate limited as
// upstream's.
func (s *Server) GRPCServer() *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(localgrpc.RateLimit(localgrpc.NewLimiter(s.cfg.Clock, DefaultQPS, DefaultBurst))))
	v1alpha1.RegisterPodResourcesListerServer(srv, &v1alpha1Server{cfg: &s.cfg, metrics: s.metrics})
	podresourcesv1.RegisterPodResourcesListerServer(srv, s.v1)
	return srv
}

// Run serves the socket until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	l, err := localgrpc.Listen(SocketPath(s.cfg.RootDir))
	if err != nil {
		return fmt.Errorf("create listener for the pod resources endpoint: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve serves l until ctx ends (Run, on a listener made already).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	return localgrpc.Serve(ctx, s.cfg.Clock, "podresources", SocketPath(s.cfg.RootDir), s.GRPCServer(), l)
}
