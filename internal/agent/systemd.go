package agent

import (
	"context"
	"net"
	"strconv"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/sdnotify"
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
	for _, addr := range n.serverAddrs() {
		for !accepts(ctx, addr) {
			klog.FromContext(ctx).V(4).Info("Waiting for a server to listen before notifying systemd", "address", addr)
			select {
			case <-ctx.Done():
				return false
			case <-t.C():
			}
		}
	}
	return true
}

// serverAddrs are the addresses of the servers berth is configured to run.
func (n *node) serverAddrs() []string {
	kc := &n.cfg.Kubelet
	var addrs []string
	if kc.HealthzPort != nil && *kc.HealthzPort > 0 {
		addrs = append(addrs, dialAddr(kc.HealthzBindAddress, *kc.HealthzPort))
	}
	if kc.ReadOnlyPort > 0 {
		addrs = append(addrs, dialAddr(kc.Address, kc.ReadOnlyPort))
	}
	if ptr.Deref(kc.EnableServer, true) {
		addrs = append(addrs, dialAddr(kc.Address, kc.Port))
	}
	return addrs
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

// accepts reports whether a TCP connection to addr succeeds.
func accepts(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
