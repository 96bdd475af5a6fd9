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

// timeouts bound how long one connection may hold a server. A plain value.
type timeouts struct {
	// ReadHeader is how long a client may take to send a request's
	// headers.
	ReadHeader time.Duration
	// Read and Write bound a whole request, body and response included;
	// a hijacked connection (exec, attach, port-forward) keeps the
	// deadlines they set.
	Read, Write time.Duration
	// Idle is how long a keep-alive connection may wait for its next
	// request.
	Idle time.Duration
	// MaxHeaderBytes caps the size of a request's headers.
	MaxHeaderBytes int
}

// defaultTimeouts are upstream's for the kubelet API and read-only servers
// (pkg/kubelet/server ListenAndServeKubeletServer): 90s idle (the keep-alive
// timeout of http.DefaultTransport), 4h to read and to write a request
// (this ends `kubectl logs -f` and exec sessions after four hours, as
// upstream), 1 MiB of headers. Upstream sets no header timeout, so a client
// that never finishes its headers would hold a connection for four hours;
// berth gives it 10s. The healthz server, which upstream serves with none
// of these, gets the same: its requests are short.
func defaultTimeouts() timeouts {
	return timeouts{
		ReadHeader:     10 * time.Second,
		Read:           4 * time.Hour,
		Write:          4 * time.Hour,
		Idle:           90 * time.Second,
		MaxHeaderBytes: 1 << 20,
	}
}

// newHTTPServer is the one place berth builds an http.Server: the kubelet
// API, read-only and healthz servers all get their limits here.
func newHTTPServer(ctx context.Context, h http.Handler, t timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

// ServeListener serves h on ln with defaultTimeouts until ctx ends.
func ServeListener(ctx context.Context, name string, ln net.Listener, h http.Handler) error {
	return serveListener(ctx, name, ln, h, defaultTimeouts())
}

func serveListener(ctx context.Context, name string, ln net.Listener, h http.Handler, t timeouts) error {
	logger := klog.FromContext(ctx).WithValues("server", name, "address", ln.Addr().String())
	srv := newHTTPServer(ctx, h, t)
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
