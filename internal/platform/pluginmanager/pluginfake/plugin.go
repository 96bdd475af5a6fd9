package pluginfake

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// Config is what a fake plugin says about itself.
type Config struct {
	// Type, Name, Endpoint and Versions are GetInfo's answer.
	Type, Name, Endpoint string
	Versions             []string
	// FailGetInfo is how many GetInfo calls fail (Unavailable) before one
	// answers.
	FailGetInfo int
}

// Status is one NotifyRegistrationStatus the plugin received.
type Status struct {
	Registered bool
	Error      string
}

// Plugin is a fake plugin serving on a unix socket. Its methods are safe
// for concurrent use.
type Plugin struct {
	registerapi.UnimplementedRegistrationServer
	cfg    Config
	server *grpc.Server
	// mu guards the fields below.
	mu        sync.Mutex
	infoCalls int
	statuses  []Status
}

// Start serves a fake plugin on a new unix socket at path (at most 107
// bytes long); t.Cleanup stops it, which removes the socket.
func Start(t testing.TB, path string, cfg Config) *Plugin {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen on plugin socket %q: %v", path, err)
	}
	p := &Plugin{cfg: cfg, server: grpc.NewServer()}
	registerapi.RegisterRegistrationServer(p.server, p)
	go func() { _ = p.server.Serve(l) }()
	t.Cleanup(p.Stop)
	return p
}

// Stop stops serving and removes the socket. Stopping twice is a no-op.
func (p *Plugin) Stop() { p.server.Stop() }

// GetInfo answers with the configured info, once the configured failures
// are spent.
func (p *Plugin) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.infoCalls++
	if p.infoCalls <= p.cfg.FailGetInfo {
		return nil, status.Error(codes.Unavailable, "fake plugin: not ready")
	}
	return &registerapi.PluginInfo{Type: p.cfg.Type, Name: p.cfg.Name, Endpoint: p.cfg.Endpoint,
		SupportedVersions: slices.Clone(p.cfg.Versions)}, nil
}

// NotifyRegistrationStatus records the status.
func (p *Plugin) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statuses = append(p.statuses, Status{Registered: s.PluginRegistered, Error: s.Error})
	return &registerapi.RegistrationStatusResponse{}, nil
}

// GetInfoCalls returns how many GetInfo calls the plugin has had.
func (p *Plugin) GetInfoCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.infoCalls
}

// Statuses returns the statuses received so far, oldest first.
func (p *Plugin) Statuses() []Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.statuses)
}
