package agent

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/klog/v2"
)

// tracingShutdownBudget bounds the flush of the spans still batched when
// berth stops.
const tracingShutdownBudget = 5 * time.Second

// shutdownTracing flushes and stops the tracer provider, if any, within
// its budget, whatever ctx's state (it runs while berth stops).
func (n *node) shutdownTracing(ctx context.Context) {
	if n.conn.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownBudget)
	defer cancel()
	if err := n.conn.tracer.Shutdown(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to flush the traces")
	}
}

// tracerProvider is n.conn.tracer as an OpenTelemetry TracerProvider: nil (not
// a non-nil interface holding nil) without tracing.
func (n *node) tracerProvider() trace.TracerProvider {
	if n.conn.tracer == nil {
		return nil
	}
	return n.conn.tracer
}
