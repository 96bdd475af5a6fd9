package tracing

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/tracing/tracingtest"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// traceOneSync starts a provider for cfg, makes one CRI call inside a
// syncPod span, and shuts the provider down (which flushes the spans).
func traceOneSync(t *testing.T, cfg *tracingapi.TracingConfiguration) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	tp, err := New(ctx, cfg, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	client := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0))).ClientWithOptions(t, cri.Options{Timeout: time.Minute, TracerProvider: tp})
	sctx, span := Tracer(tp).Start(ctx, "syncPod")
	if _, err := client.Runtime.Version(sctx, &runtimeapi.VersionRequest{Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Image.ListImages(sctx, &runtimeapi.ListImagesRequest{}); err != nil {
		t.Fatal(err)
	}
	span.End()
	shutdown, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(shutdown); err != nil {
		t.Fatalf("shut down the tracer provider: %v", err)
	}
}

// TestSpansReachTheCollector: with tracing set, the pod sync span and the
// CRI calls made in it are exported by OTLP gRPC to the endpoint, with
// upstream's resource (service.name kubelet, host.name) and scope, the
// CRI calls as children of the sync.
func TestSpansReachTheCollector(t *testing.T) {
	c, addr := tracingtest.Start(t)
	traceOneSync(t, &tracingapi.TracingConfiguration{Endpoint: ptr.To(addr), SamplingRatePerMillion: ptr.To[int32](1000000)})
	grpcScope := "go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	want := []tracingtest.Span{
		{Name: "runtime.v1.RuntimeService/Version", Scope: grpcScope, Service: "kubelet", Host: "node-a", Parent: "syncPod"},
		{Name: "runtime.v1.ImageService/ListImages", Scope: grpcScope, Service: "kubelet", Host: "node-a", Parent: "syncPod"},
		{Name: "syncPod", Scope: InstrumentationScope, Service: "kubelet", Host: "node-a"},
	}
	if diff := cmp.Diff(want, c.Spans(), cmpopts.IgnoreFields(tracingtest.Span{}, "Attrs")); diff != "" {
		t.Errorf("spans received (-want +got):\n%s", diff)
	}
}

// TestSamplingRateZeroExportsNothing: upstream's default rate, 0, samples
// only what a sampled parent asks for; berth's syncs have none.
func TestSamplingRateZeroExportsNothing(t *testing.T) {
	c, addr := tracingtest.Start(t)
	traceOneSync(t, &tracingapi.TracingConfiguration{Endpoint: ptr.To(addr)})
	if got := c.Spans(); len(got) != 0 {
		t.Errorf("spans received at rate 0: %+v", got)
	}
}

func TestUnsetBuildsNothing(t *testing.T) {
	tp, err := New(context.Background(), nil, "node-a")
	if err != nil || tp != nil {
		t.Fatalf("New(nil) = %v, %v; want no provider", tp, err)
	}
	_, span := Tracer(nil).Start(context.Background(), "syncPod")
	if span.SpanContext().IsValid() || span.IsRecording() {
		t.Error("the tracer without tracing records")
	}
}

// TestNamesMatchUpstream pins the tracer's instrumentation scope and the
// service name to upstream's kubelet.
func TestNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet", "instrumentationScope").AsString(); up != InstrumentationScope {
		t.Errorf("instrumentation scope %q, upstream %q", InstrumentationScope, up)
	}
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/server", "ComponentKubelet").AsString(); up != ServiceName {
		t.Errorf("service name %q, upstream %q", ServiceName, up)
	}
}
