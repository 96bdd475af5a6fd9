package dra

import (
	"context"

	"google.golang.org/grpc/stats"
	"k8s.io/klog/v2"
)

// connWatch tells the Drivers when a plugin's connection comes up or goes
// down (upstream's monitoredPlugin): a driver none of whose connections
// is up is away, and its slices are wiped after the delay, also while its
// socket is still there (a driver that died without removing it). A
// connection that ends is started again, as upstream.
type connWatch struct {
	d *Drivers
	p *plugin
}

var _ stats.Handler = (*connWatch)(nil)

func (w *connWatch) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (w *connWatch) HandleRPC(context.Context, stats.RPCStats)                       {}
func (w *connWatch) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

// HandleConn records the connection's state.
func (w *connWatch) HandleConn(ctx context.Context, s stats.ConnStats) {
	var up bool
	switch s.(type) {
	case *stats.ConnBegin:
		up = true
	case *stats.ConnEnd:
		go w.p.conn.Connect()
	default:
		return
	}
	w.d.setConnected(klog.FromContext(ctx), w.p, up)
}
