package csifake

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Config is what a fake driver answers.
type Config struct {
	// Name is GetPluginInfo's name.
	Name string
	// NodeID, MaxVolumesPerNode and Topology (the accessible topology's
	// segments; nil sends none) are NodeGetInfo's answer.
	NodeID            string
	MaxVolumesPerNode int64
	Topology          map[string]string
	// Capabilities are NodeGetCapabilities' RPC capabilities.
	Capabilities []csi.NodeServiceCapability_RPC_Type
	// Stats is NodeGetVolumeStats' answer (nil: an empty one).
	Stats *csi.NodeGetVolumeStatsResponse
	// ManageTargets makes NodePublishVolume create its target_path (a
	// directory; for a Block capability an empty file) and
	// NodeUnpublishVolume remove it, as the CSI spec asks
	// of a driver; without it the driver leaves the paths alone.
	ManageTargets bool
}

// Call is one call the driver received: the method's name
// ("NodeGetInfo") and a copy of its request.
type Call struct {
	Method  string
	Request proto.Message
}

// Driver is a fake CSI driver serving on a unix socket. Its methods are
// safe for concurrent use.
type Driver struct {
	server *grpc.Server
	// mu guards the fields below.
	mu    sync.Mutex
	cfg   Config
	fails map[string]error
	calls []Call
}

// Start serves a fake driver on a new unix socket at path (at most 107
// bytes long); t.Cleanup stops it.
func Start(t testing.TB, path string, cfg Config) *Driver {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen on CSI socket %q: %v", path, err)
	}
	d := &Driver{server: grpc.NewServer(), cfg: cfg, fails: map[string]error{}}
	csi.RegisterIdentityServer(d.server, identity{d: d})
	csi.RegisterNodeServer(d.server, node{d: d})
	go func() { _ = d.server.Serve(l) }()
	t.Cleanup(d.Stop)
	return d
}

// Stop stops serving and removes the socket. Stopping twice is a no-op.
func (d *Driver) Stop() { d.server.Stop() }

// SetConfig replaces what the driver answers from now on.
func (d *Driver) SetConfig(cfg Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cfg = cfg
}

// Fail makes every later call of method ("NodeGetInfo") fail with err
// (a status error, from google.golang.org/grpc/status); nil makes it
// succeed again. Failed calls are recorded too.
func (d *Driver) Fail(method string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.fails, method)
		return
	}
	d.fails[method] = err
}

// Calls returns the calls received so far, oldest first.
func (d *Driver) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// CallsTo returns the calls of method received so far, oldest first.
func (d *Driver) CallsTo(method string) []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Call
	for _, c := range d.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Methods returns the methods of the calls received so far, oldest first.
func (d *Driver) Methods() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.calls))
	for _, c := range d.calls {
		out = append(out, c.Method)
	}
	return out
}

// record logs a call and returns the configuration to answer it with, or
// the error it must fail with.
func (d *Driver) record(method string, req proto.Message) (Config, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, Call{Method: method, Request: proto.Clone(req)})
	cfg := d.cfg
	cfg.Topology = maps.Clone(cfg.Topology)
	cfg.Capabilities = slices.Clone(cfg.Capabilities)
	return cfg, d.fails[method]
}

// identity serves the Identity service.
type identity struct {
	csi.UnimplementedIdentityServer
	d *Driver
}

func (s identity) GetPluginInfo(_ context.Context, req *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	cfg, err := s.d.record("GetPluginInfo", req)
	if err != nil {
		return nil, err
	}
	return &csi.GetPluginInfoResponse{Name: cfg.Name, VendorVersion: "fake"}, nil
}

func (s identity) GetPluginCapabilities(_ context.Context, req *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	if _, err := s.d.record("GetPluginCapabilities", req); err != nil {
		return nil, err
	}
	return &csi.GetPluginCapabilitiesResponse{}, nil
}

func (s identity) Probe(_ context.Context, req *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	if _, err := s.d.record("Probe", req); err != nil {
		return nil, err
	}
	return &csi.ProbeResponse{}, nil
}

// node serves the Node service.
type node struct {
	csi.UnimplementedNodeServer
	d *Driver
}

func (s node) NodeGetInfo(_ context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	cfg, err := s.d.record("NodeGetInfo", req)
	if err != nil {
		return nil, err
	}
	resp := &csi.NodeGetInfoResponse{NodeId: cfg.NodeID, MaxVolumesPerNode: cfg.MaxVolumesPerNode}
	if cfg.Topology != nil {
		resp.AccessibleTopology = &csi.Topology{Segments: cfg.Topology}
	}
	return resp, nil
}

func (s node) NodeGetCapabilities(_ context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	cfg, err := s.d.record("NodeGetCapabilities", req)
	if err != nil {
		return nil, err
	}
	resp := &csi.NodeGetCapabilitiesResponse{}
	for _, c := range cfg.Capabilities {
		resp.Capabilities = append(resp.Capabilities, &csi.NodeServiceCapability{
			Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: c}},
		})
	}
	return resp, nil
}

func (s node) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if _, err := s.d.record("NodeStageVolume", req); err != nil {
		return nil, err
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

func (s node) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if _, err := s.d.record("NodeUnstageVolume", req); err != nil {
		return nil, err
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

func (s node) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	cfg, err := s.d.record("NodePublishVolume", req)
	if err != nil {
		return nil, err
	}
	if cfg.ManageTargets {
		if req.GetVolumeCapability().GetBlock() != nil {
			// A block volume's target is a file (a device, for a real driver).
			f, err := os.OpenFile(req.GetTargetPath(), os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, status.Errorf(codes.Internal, "create target path: %v", err)
			}
			f.Close()
		} else if err := os.Mkdir(req.GetTargetPath(), 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, status.Errorf(codes.Internal, "create target path: %v", err)
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (s node) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	cfg, err := s.d.record("NodeUnpublishVolume", req)
	if err != nil {
		return nil, err
	}
	if cfg.ManageTargets {
		if err := os.Remove(req.GetTargetPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, status.Errorf(codes.Internal, "remove target path: %v", err)
		}
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (s node) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	cfg, err := s.d.record("NodeGetVolumeStats", req)
	if err != nil {
		return nil, err
	}
	if cfg.Stats == nil {
		return &csi.NodeGetVolumeStatsResponse{}, nil
	}
	return proto.Clone(cfg.Stats).(*csi.NodeGetVolumeStatsResponse), nil
}

// NodeExpandVolume answers that the volume has the capacity asked for.
func (s node) NodeExpandVolume(_ context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	if _, err := s.d.record("NodeExpandVolume", req); err != nil {
		return nil, err
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: req.GetCapacityRange().GetRequiredBytes()}, nil
}
