package localgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// StopBudget is how long Serve waits for calls in flight once its context
// ends before it cuts them (a watch stream never ends by itself).
const StopBudget = 2 * time.Second

// Serve serves srv on l (listening on endpoint) until ctx ends, then stops it: gracefully within
// StopBudget, then by closing every connection. It returns nil after a
// stop, or the error that ended serving.
func Serve(ctx context.Context, clk clock.Clock, name, endpoint string, srv *grpc.Server, l net.Listener) error {
	logger := klog.FromContext(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	logger.Info("Serving", "server", name, "endpoint", endpoint)
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return fmt.Errorf("serve %s: %w", name, err)
		}
		return nil
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-clk.After(StopBudget):
		srv.Stop()
		<-stopped
	}
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve %s: %w", name, err)
	}
	return nil
}
