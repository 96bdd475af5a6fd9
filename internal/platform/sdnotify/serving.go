package sdnotify

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// servingPoll is how often WaitServing checks that the servers accept
// connections.
const servingPoll = 100 * time.Millisecond

// Listener is one server berth runs: where to reach it from this host
// (DialAddr), and whether it speaks TLS.
type Listener struct {
	Addr string
	TLS  bool
}

// WaitServing blocks until berth serves, or ctx ends (false): registered
// is closed (nil: nothing to wait for; in cluster mode, the Node is
// registered), then every listener accepts connections. That is when
// berth tells systemd it is ready (Notifier.Ready).
func WaitServing(ctx context.Context, clk clock.WithTicker, registered <-chan struct{}, listeners []Listener) bool {
	if registered != nil {
		select {
		case <-registered:
		case <-ctx.Done():
			return false
		}
	}
	t := clk.NewTicker(servingPoll)
	defer t.Stop()
	for _, srv := range listeners {
		for !accepts(ctx, srv) {
			klog.FromContext(ctx).V(4).Info("Waiting for a server to listen before notifying systemd", "address", srv.Addr)
			select {
			case <-ctx.Done():
				return false
			case <-t.C():
			}
		}
	}
	return true
}

// DialAddr is where a server bound to host:port can be reached from here:
// an unspecified bind address is reached on loopback.
func DialAddr(host string, port int32) string {
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// accepts reports whether srv accepts a connection: for the TLS server, a
// handshake that completes or that the server refuses with an alert (a
// bare connection would make it log a handshake error). Nothing is sent and nothing received is trusted: berth only
// checks its own listener, so the certificate is not verified.
func accepts(ctx context.Context, srv Listener) bool {
	d := net.Dialer{Timeout: time.Second}
	var conn net.Conn
	var err error
	if srv.TLS {
		td := tls.Dialer{NetDialer: &d, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // see above
		conn, err = td.DialContext(ctx, "tcp", srv.Addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", srv.Addr)
	}
	if err != nil {
		// A TLS alert is the server answering: until serverTLSBootstrap's
		// certificate is issued the kubelet API refuses every handshake, as
		// upstream's, yet it serves.
		var op *net.OpError
		return srv.TLS && errors.As(err, &op) && op.Op == "remote error"
	}
	_ = conn.Close()
	return true
}
