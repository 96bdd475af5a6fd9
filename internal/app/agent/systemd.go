package agent

import (
	"context"

	"github.com/berthk8s/berth/internal/platform/sdnotify"
)

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
		var registered <-chan struct{}
		if n.cluster.nodeCtl != nil {
			registered = n.cluster.gates.nodeSynced
		}
		if !sdnotify.WaitServing(ctx, n.clock, registered, n.serverAddrs()) {
			return nil
		}
		notifier.Ready(ctx)
		return notifier.Run(ctx)
	}
}

// serverAddrs are the servers berth is configured to run.
func (n *node) serverAddrs() []sdnotify.Listener {
	kc := &n.cfg.Kubelet
	var out []sdnotify.Listener
	if kc.HealthzPort != nil && *kc.HealthzPort > 0 {
		out = append(out, sdnotify.Listener{Addr: sdnotify.DialAddr(kc.HealthzBindAddress, *kc.HealthzPort)})
	}
	if kc.ReadOnlyPort > 0 {
		out = append(out, sdnotify.Listener{Addr: sdnotify.DialAddr(kc.Address, kc.ReadOnlyPort)})
	}
	if n.set.EnableServer {
		out = append(out, sdnotify.Listener{Addr: sdnotify.DialAddr(kc.Address, kc.Port), TLS: true})
	}
	return out
}
