package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// stopTimeout bounds how long a graceful stop waits for calls in flight.
const stopTimeout = 5 * time.Second

// driver is the running CSI server and registration server. start builds
// it; run owns it from then on.
type driver struct {
	csiPath, regPath string
	csi, reg         *grpc.Server
	calls            *callLog
	blocks           *blockDevices
	// failed carries the kubelet's failed registration (capacity 1).
	failed chan error
}

// start listens on the CSI socket, then on the registration socket (so
// that the kubelet, which calls NodeGetInfo as it registers, finds the CSI
// socket up), and serves both.
func start(o options) (*driver, error) {
	csiPath, err := filepath.Abs(o.csiAddress)
	if err != nil {
		return nil, fmt.Errorf("resolve --csi-address %q: %w", o.csiAddress, err)
	}
	calls, err := openCallLog(o.callLog)
	if err != nil {
		return nil, err
	}
	d := &driver{
		csiPath: csiPath,
		regPath: filepath.Join(o.registrationDir, o.mock.DriverName+"-reg.sock"),
		calls:   calls,
		failed:  make(chan error, 1),
	}
	if err := os.MkdirAll(o.registrationDir, 0o750); err != nil {
		calls.Close()
		return nil, fmt.Errorf("create registration dir %q: %w", o.registrationDir, err)
	}
	csiL, err := listenUnix(d.csiPath)
	if err != nil {
		calls.Close()
		return nil, err
	}
	regL, err := listenUnix(d.regPath)
	if err != nil {
		csiL.Close()
		calls.Close()
		return nil, err
	}

	if d.blocks, err = newBlockDevices(); err != nil {
		regL.Close()
		csiL.Close()
		calls.Close()
		return nil, err
	}
	mock := service.New(o.mock)
	d.csi = grpc.NewServer(grpc.ChainUnaryInterceptor(holdPublish(o.holdPublish), calls.intercept))
	csi.RegisterIdentityServer(d.csi, mock)
	csi.RegisterNodeServer(d.csi, newEphemeralNode(mock, d.blocks))
	csi.RegisterControllerServer(d.csi, mock)
	d.reg = grpc.NewServer(grpc.UnaryInterceptor(calls.intercept))
	registerapi.RegisterRegistrationServer(d.reg, &registration{
		name:     o.mock.DriverName,
		endpoint: d.csiPath,
		failed:   d.failed,
	})
	// Serve returns when stop stops the server.
	go func() { _ = d.csi.Serve(csiL) }()
	go func() { _ = d.reg.Serve(regL) }()
	return d, nil
}

// run blocks until ctx ends (nil) or the kubelet reports that it did not
// register the driver (that error); either way it stops both servers and
// removes both sockets first.
func (d *driver) run(ctx context.Context) error {
	var err error
	select {
	case <-ctx.Done():
	case err = <-d.failed:
	}
	d.stop()
	return err
}

// stop stops the registration server, then the CSI server, each
// gracefully for up to stopTimeout, removes the sockets and closes the
// call log.
func (d *driver) stop() {
	for _, s := range []*grpc.Server{d.reg, d.csi} {
		stopped := make(chan struct{})
		go func() { s.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(stopTimeout):
			s.Stop()
		}
	}
	// Closing a listener removes its socket already; this covers the rest.
	for _, p := range []string{d.regPath, d.csiPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "csi-mock-driver: remove socket %q: %v\n", p, err)
		}
	}
	d.calls.Close()
	d.blocks.stop()
}

// listenUnix listens on a unix socket at path, removing a stale socket
// there first; anything else at path is an error.
func listenUnix(path string) (net.Listener, error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("listen on %q: exists and is not a socket", path)
	case err == nil:
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %q: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("stat socket %q: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %q: %w", path, err)
	}
	return l, nil
}
