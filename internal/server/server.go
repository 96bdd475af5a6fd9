package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/klog/v2"
)

// HealthzHandler serves GET /healthz.
func HealthzHandler(check HealthFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", healthz(check))
	return mux
}

// Serve listens on host:port and serves h until ctx ends, then shuts down
// within five seconds. A listen failure is returned at once.
func Serve(ctx context.Context, name, host string, port int, h http.Handler) error {
	ln, err := listen(name, host, port)
	if err != nil {
		return err
	}
	return ServeListener(ctx, name, ln, h)
}

// ServeTLS listens on host:port and serves h over TLS until ctx ends.
func ServeTLS(ctx context.Context, name, host string, port int, cfg *tls.Config, h http.Handler) error {
	ln, err := listen(name, host, port)
	if err != nil {
		return err
	}
	cfg = cfg.Clone()
	// HTTP/1.1 only: exec, attach and port-forward upgrade the connection.
	cfg.NextProtos = []string{"http/1.1"}
	return ServeListener(ctx, name, tls.NewListener(ln, cfg), h)
}

func listen(name, host string, port int) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s on %q: %w", name, addr, err)
	}
	return ln, nil
}

// ServeListener serves h on ln until ctx ends.
func ServeListener(ctx context.Context, name string, ln net.Listener, h http.Handler) error {
	logger := klog.FromContext(ctx).WithValues("server", name, "address", ln.Addr().String())
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	logger.Info("Serving")
	select {
	case err := <-done:
		return fmt.Errorf("serve %s: %w", name, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shut down %s: %w", name, err)
	}
	return nil
}
