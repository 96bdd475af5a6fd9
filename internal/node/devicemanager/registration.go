package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/berthk8s/berth/internal/node/devicemanager/checkpoint"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ValidateRegistration checks a registration as upstream's Register: an
// API version berth serves and an extended resource name. Pure.
func ValidateRegistration(r *pluginapi.RegisterRequest) error {
	if !slices.Contains(pluginapi.SupportedVersions[:], r.GetVersion()) {
		return fmt.Errorf(msgUnsupportedVersion, r.GetVersion(), pluginapi.SupportedVersions)
	}
	if !podutil.IsExtendedResourceName(corev1.ResourceName(r.GetResourceName())) {
		return fmt.Errorf(msgInvalidResourceName, r.GetResourceName())
	}
	return nil
}

// Run serves the Registration service on <Dir>/kubelet.sock until ctx
// ends: it creates the directory, removes the sockets left in it (plugins
// watch for that and register again), listens, and streams each
// registered plugin's devices. When ctx ends it stops serving and closes
// every plugin's connection; the assignments stay checkpointed.
func (m *Manager) Run(ctx context.Context) error {
	if err := os.MkdirAll(m.cfg.Dir, 0o750); err != nil {
		return fmt.Errorf("create device plugin directory %q: %w", m.cfg.Dir, err)
	}
	if err := removeSockets(ctx, m.cfg.Dir); err != nil {
		return fmt.Errorf("clean up device plugin directory %q: %w", m.cfg.Dir, err)
	}
	socket := filepath.Join(m.cfg.Dir, SocketName)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("listen on device plugin registration socket %q: %w", socket, err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, &registrar{m: m, watch: func(e *endpoint) {
		wg.Go(func() { m.watch(watchCtx, e) })
	}})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	klog.FromContext(ctx).Info("Serving device plugin registration", "socket", socket)
	select {
	case <-ctx.Done():
		srv.Stop()
		_ = <-served // Serve returns nil once stopped
		return nil
	case err := <-served:
		return fmt.Errorf("serve device plugin registration on %q: %w", socket, err)
	}
}

// removeSockets removes the unix sockets in dir (upstream's
// CleanupPluginDirectory): directories, the checkpoint and other files
// stay; a socket that cannot be removed is an error.
func removeSockets(ctx context.Context, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Name() == checkpoint.FileName || e.Type()&fs.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			klog.FromContext(ctx).Error(err, "Failed to remove file", "path", path)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// registrar is the Registration service.
type registrar struct {
	pluginapi.UnsafeRegistrationServer
	m *Manager
	// watch starts streaming a connected plugin's devices, under Run.
	watch func(*endpoint)
}

// Register validates the request, connects to the plugin's socket in the
// directory and starts streaming its devices.
func (r *registrar) Register(ctx context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	logger := klog.FromContext(ctx).WithValues("resourceName", req.GetResourceName())
	logger.Info("Got registration request from device plugin with resource")
	if err := ValidateRegistration(req); err != nil {
		logger.Error(err, "Bad registration request from device plugin")
		return &pluginapi.Empty{}, err
	}
	e, err := connect(ctx, req.GetResourceName(), filepath.Join(r.m.cfg.Dir, req.GetEndpoint()))
	if err != nil {
		logger.Error(err, "Error connecting to device plugin client")
		return &pluginapi.Empty{}, err
	}
	if err := r.m.register(e); err != nil {
		_ = e.conn.Close()
		logger.Error(err, "Error connecting to device plugin client")
		return &pluginapi.Empty{}, err
	}
	logger.V(2).Info("Device plugin connected", "socketPath", e.socket)
	r.watch(e)
	return &pluginapi.Empty{}, nil
}

// register records a connected plugin as its resource's (upstream's
// PluginConnected): a plugin still connected on the same socket refuses
// the new one.
func (m *Manager) register(e *endpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	byPath := m.connected[e.resource]
	if byPath == nil {
		byPath = map[string]*endpoint{}
		m.connected[e.resource] = byPath
	}
	if _, ok := byPath[e.socket]; ok {
		return fmt.Errorf(msgAlreadyConnected, e.socket)
	}
	byPath[e.socket] = e
	m.endpoints[e.resource] = e
	return nil
}
