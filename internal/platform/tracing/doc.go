// Package tracing builds berth's OpenTelemetry TracerProvider from the
// KubeletConfiguration's tracing (endpoint, samplingRatePerMillion), as
// upstream's kubelet does with component-base's tracing: an OTLP gRPC
// exporter, a batch span processor, a parent-based sampler at the given
// rate, and the resource service.name "kubelet" and host.name. Without a
// tracing setting nothing is built: New returns nil, the CRI connection
// gets no stats handler and the pod sync spans go to a no-op tracer, so
// berth pays nothing for tracing it does not do.
//
// Spans (upstream's names): the pod workers' syncPod,
// syncTerminatingPod and syncTerminatedPod (internal/pod/podsync), and one
// client span per CRI call, "runtime.v1.RuntimeService/<Method>" and
// "runtime.v1.ImageService/<Method>", by otelgrpc's stats handler
// (internal/platform/cri), children of the sync that made them.
package tracing
