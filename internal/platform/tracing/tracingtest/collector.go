package tracingtest

import (
	"context"
	"net"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Collector is an OTLP gRPC trace service. It is safe for concurrent use;
// mu guards spans.
type Collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
}

// Start serves a Collector on a loopback port and returns it with its
// address ("127.0.0.1:port"), the endpoint to give berth. It stops with t.
func Start(t testing.TB) (*Collector, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return c, lis.Addr().String()
}

// Export keeps the spans of one export.
func (c *Collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, req.GetResourceSpans()...)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Span is one received span, flattened.
type Span struct {
	Name, Scope string
	// Service and Host are the resource's service.name and host.name.
	Service, Host string
	// Parent is the parent span's name ("" for a root, or a parent not
	// received).
	Parent string
	// Attrs are the span's string attributes.
	Attrs map[string]string
}

// Spans returns every span received so far, in the order received.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := map[string]string{}
	var parents []string
	var out []Span
	for _, rs := range c.spans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				names[string(s.GetSpanId())] = s.GetName()
				parents = append(parents, string(s.GetParentSpanId()))
				out = append(out, Span{Name: s.GetName(), Scope: ss.GetScope().GetName(),
					Service: res["service.name"], Host: res["host.name"], Attrs: attrs(s.GetAttributes())})
			}
		}
	}
	for i := range out {
		out[i].Parent = names[parents[i]]
	}
	return out
}

func attrs[T interface {
	GetKey() string
	GetValue() V
}, V interface{ GetStringValue() string }](kvs []T) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		if v := kv.GetValue().GetStringValue(); v != "" {
			m[kv.GetKey()] = v
		}
	}
	return m
}
