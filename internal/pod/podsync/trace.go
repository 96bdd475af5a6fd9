package podsync

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Span names and attributes of the pod syncs, upstream's (kubelet.go
// SyncPod, SyncTerminatingPod, SyncTerminatedPod); the k8s.* keys are the
// OpenTelemetry semantic conventions upstream uses.
const (
	spanSyncPod            = "syncPod"
	spanSyncTerminatingPod = "syncTerminatingPod"
	spanSyncTerminatedPod  = "syncTerminatedPod"

	attrPodUID     = attribute.Key("k8s.pod.uid")
	attrPod        = attribute.Key("k8s.pod")
	attrPodName    = attribute.Key("k8s.pod.name")
	attrUpdateType = attribute.Key("k8s.pod.update_type")
	attrNamespace  = attribute.Key("k8s.namespace.name")
)

// SyncPod is syncPod in a "syncPod" span; the CRI calls it makes are the
// span's children.
func (s *Syncer) SyncPod(ctx context.Context, t podworker.UpdateType, pod *corev1.Pod, rt *runtimestate.Pod) (out podworker.SyncResult, err error) {
	ctx, span := s.startSpan(ctx, spanSyncPod, pod, attrUpdateType.String(t.String()))
	defer func() { endSpan(span, err) }()
	return s.syncPod(ctx, t, pod, rt)
}

// SyncTerminatingPod is syncTerminatingPod in a "syncTerminatingPod" span.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod, kill podworker.Kill) (err error) {
	ctx, span := s.startSpan(ctx, spanSyncTerminatingPod, pod)
	defer func() { endSpan(span, err) }()
	return s.syncTerminatingPod(ctx, pod, rt, kill)
}

// SyncTerminatedPod is syncTerminatedPod in a "syncTerminatedPod" span.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rt *runtimestate.Pod) (gone bool, err error) {
	ctx, span := s.startSpan(ctx, spanSyncTerminatedPod, pod)
	defer func() { endSpan(span, err) }()
	return s.syncTerminatedPod(ctx, pod, rt)
}

// startSpan starts a span about the pod with upstream's attributes, in
// upstream's order, the extra ones after the pod's name.
func (s *Syncer) startSpan(ctx context.Context, name string, pod *corev1.Pod, extra ...attribute.KeyValue) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		attrPodUID.String(string(pod.UID)),
		attrPod.String(klog.KObj(pod).String()),
		attrPodName.String(pod.Name),
	}
	attrs = append(attrs, extra...)
	attrs = append(attrs, attrNamespace.String(pod.Namespace))
	return s.cfg.Tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endSpan records err, if any, as upstream does, and ends the span.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
