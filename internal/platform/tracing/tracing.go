package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	cbtracing "k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
)

// InstrumentationScope is the name of berth's tracer, upstream's kubelet
// instrumentationScope.
const InstrumentationScope = "k8s.io/kubernetes/pkg/kubelet"

// ServiceName is the service.name of berth's spans: berth stands in for
// the kubelet (upstream server.ComponentKubelet).
const ServiceName = "kubelet"

// Resource attribute keys (OpenTelemetry semantic conventions).
const (
	serviceNameKey = attribute.Key("service.name")
	hostNameKey    = attribute.Key("host.name")
)

// New returns the TracerProvider for cfg, or nil when cfg is nil (no
// tracing). hostname is the node's name, the spans' host.name. Extra
// exporter options (tests point the exporter at their collector) come
// after the endpoint. The caller shuts the provider down, which flushes
// the spans still batched.
func New(ctx context.Context, cfg *tracingapi.TracingConfiguration, hostname string, opts ...otlptracegrpc.Option) (cbtracing.TracerProvider, error) {
	if cfg == nil {
		return nil, nil
	}
	res := []resource.Option{resource.WithAttributes(serviceNameKey.String(ServiceName), hostNameKey.String(hostname))}
	tp, err := cbtracing.NewProvider(ctx, cfg, opts, res)
	if err != nil {
		return nil, fmt.Errorf("create tracer provider: %w", err)
	}
	return tp, nil
}

// Tracer returns berth's tracer from tp, or a no-op tracer when tp is nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return noop.NewTracerProvider().Tracer(InstrumentationScope)
	}
	return tp.Tracer(InstrumentationScope)
}
