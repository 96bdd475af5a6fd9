package podsync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podworker"
)

// TestSyncsAreTraced: each sync of a pod's life is one span with
// upstream's name and attributes.
func TestSyncsAreTraced(t *testing.T) {
	f := newFixture(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(f.ctx) })
	f.s.cfg.Tracer = tp.Tracer("test")
	pod := testPod(corev1.RestartPolicyNever)
	f.desired[pod.UID] = true
	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodCreate, pod, running()); err != nil {
		t.Fatal(err)
	}
	f.rt.after = exited(0)
	if err := f.s.SyncTerminatingPod(f.ctx, pod, running(), podworker.Kill{GracePeriod: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SyncTerminatedPod(f.ctx, pod, exited(0)); err != nil {
		t.Fatal(err)
	}
	type span struct {
		Name  string
		Attrs map[string]string
	}
	var got []span
	for _, s := range rec.Ended() {
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		got = append(got, span{s.Name(), attrs})
	}
	pa := func(extra ...attribute.KeyValue) map[string]string {
		m := map[string]string{"k8s.pod.uid": "u1", "k8s.pod": "default/web", "k8s.pod.name": "web", "k8s.namespace.name": "default"}
		for _, kv := range extra {
			m[string(kv.Key)] = kv.Value.String()
		}
		return m
	}
	want := []span{
		{"syncPod", pa(attribute.String("k8s.pod.update_type", "create"))},
		{"syncTerminatingPod", pa()},
		{"syncTerminatedPod", pa()},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}
