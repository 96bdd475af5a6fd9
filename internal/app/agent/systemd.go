package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/sdnotify"
)

// servingPoll is how often berth checks that its servers accept
// connections before it tells systemd it is ready.
const servingPoll = 100 * time.Millisecond

// notifySystemd returns the component that tells systemd berth is ready
// once it serves (in cluster mode the Node is registered, and every
// configured server accepts connections), then pings systemd's watchdog
// while health passes (WATCHDOG_USEC). Without NOTIFY_SOCKET it sends
// nothing.
func (n *node) notifySystemd(health func() error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		timeout, err := sdnotify.WatchdogFromEnv()
		if err != nil {
			return err
		}
		notifier, err := sdnotify.New(sdnotify.Config{WatchdogTimeout: timeout, Health: health, Clock: n.clock})
		if err != nil {
			return err
		}
		if !n.waitServing(ctx) {
			return nil
		}
		notifier.Ready(ctx)
		return notifier.Run(ctx)
	}
}

// waitServing blocks until berth serves, or ctx ends (false).
func (n *node) waitServing(ctx context.Context) bool {
	if n.cluster.nodeCtl != nil {
		select {
		case <-n.cluster.nodeSynced:
		case <-ctx.Done():
			return false
		}
	}
	t := n.clock.NewTicker(servingPoll)
	defer t.Stop()
	for _, srv := range n.serverAddrs() {
		for !accepts(ctx, srv) {
			klog.FromContext(ctx).V(4).Info("Waiting for a server to listen before notifying systemd", "address", srv.addr)
			select {
			case <-ctx.Done():
				return false
			case <-t.C():
			}
		}
	}
	return true
}

// listener is one server berth runs: where to reach it, and whether it
// speaks TLS.
type listener struct {
	addr string
	tls  bool
}

// serverAddrs are the servers berth is configured to run.
func (n *node) serverAddrs() []listener {
	kc := &n.cfg.Kubelet
	var out []listener
	if kc.HealthzPort != nil && *kc.HealthzPort > 0 {
		out = append(out, listener{addr: dialAddr(kc.HealthzBindAddress, *kc.HealthzPort)})
	}
	if kc.ReadOnlyPort > 0 {
		out = append(out, listener{addr: dialAddr(kc.Address, kc.ReadOnlyPort)})
	}
	if ptr.Deref(kc.EnableServer, true) {
		out = append(out, listener{addr: dialAddr(kc.Address, kc.Port), tls: true})
	}
	return out
}

// dialAddr is where a server bound to host:port can be reached from here:
// an unspecified bind address is reached on loopback.
func dialAddr(host string, port int32) string {
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
func accepts(ctx context.Context, srv listener) bool {
	d := net.Dialer{Timeout: time.Second}
	var conn net.Conn
	var err error
	if srv.tls {
		td := tls.Dialer{NetDialer: &d, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // see above
		conn, err = td.DialContext(ctx, "tcp", srv.addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", srv.addr)
	}
	if err != nil {
		// A TLS alert is the server answering: until serverTLSBootstrap's
		// certificate is issued the kubelet API refuses every handshake, as
		// upstream's, yet it serves.
		var op *net.OpError
		return srv.tls && errors.As(err, &op) && op.Op == "remote error"
	}
	_ = conn.Close()
	return true
}
