package cri

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// maxMsgSize is the largest message berth accepts from the runtime, as in
// the upstream kubelet (a ListContainers on a busy node is large).
const maxMsgSize = 16 * 1024 * 1024

// Options configures a Client.
type Options struct {
	// RuntimeEndpoint is the runtime service endpoint in upstream form,
	// "unix:///run/containerd/containerd.sock"; a bare socket path is
	// accepted too.
	RuntimeEndpoint string
	// ImageEndpoint is the image service endpoint. Empty means the runtime
	// endpoint, and then both services share one connection.
	ImageEndpoint string
	// Timeout is the runtime request timeout applied to unary calls (see
	// callTimeout for the exceptions). Zero disables timeouts.
	Timeout time.Duration
	// Observe, if set, is called once for every CRI call.
	Observe ObserveFunc
	// Clock measures call durations for Observe; nil means the real clock.
	Clock clock.PassiveClock
	// TracerProvider, if set (kubelet tracing), traces every call: one
	// client span per call with upstream's options (otelgrpc's stats
	// handler, W3C trace context and baggage propagated to the runtime,
	// sent and received message events). Nil installs nothing.
	TracerProvider trace.TracerProvider
}

// Dial creates a Client for the endpoints in o. Like grpc.NewClient it does
// not wait for the runtime to answer: connections are made on first use and
// re-made after failures. Call Verify to check the runtime. The Client owns
// its connections; Close releases them.
func Dial(ctx context.Context, o Options) (*Client, error) {
	runtimeTarget, err := parseEndpoint(o.RuntimeEndpoint)
	if err != nil {
		return nil, fmt.Errorf("parse runtime endpoint %q: %w", o.RuntimeEndpoint, err)
	}
	imageTarget := runtimeTarget
	if o.ImageEndpoint != "" {
		if imageTarget, err = parseEndpoint(o.ImageEndpoint); err != nil {
			return nil, fmt.Errorf("parse image endpoint %q: %w", o.ImageEndpoint, err)
		}
	}
	opts := append(DialOptions(o), grpc.WithAuthority("localhost"))
	runtimeConn, err := grpc.NewClient(runtimeTarget, opts...)
	if err != nil {
		return nil, fmt.Errorf("create runtime connection %q: %w", runtimeTarget, err)
	}
	imageConn := runtimeConn
	if imageTarget != runtimeTarget {
		if imageConn, err = grpc.NewClient(imageTarget, opts...); err != nil {
			_ = runtimeConn.Close()
			return nil, fmt.Errorf("create image connection %q: %w", imageTarget, err)
		}
	}
	klog.FromContext(ctx).V(2).Info("CRI client created", "runtimeEndpoint", runtimeTarget, "imageEndpoint", imageTarget, "timeout", o.Timeout)
	return NewForConns(runtimeConn, imageConn), nil
}

// DialOptions returns the dial options every berth CRI connection needs:
// plaintext transport (the runtime listens on a local unix socket), the
// message size limit, and the interceptors configured by o (timeouts, error
// classification, Observe). Use it with NewForConns to build a Client over a
// connection made elsewhere, for example over bufconn in tests.
func DialOptions(o Options) []grpc.DialOption {
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	in := interceptors{timeout: o.Timeout, observe: o.Observe, clock: clk}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
		grpc.WithChainUnaryInterceptor(in.unary),
		grpc.WithChainStreamInterceptor(in.stream),
	}
	if o.TracerProvider != nil {
		// As upstream's cri-client (remote_runtime.go).
		opts = append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler(
			otelgrpc.WithMessageEvents(otelgrpc.ReceivedEvents, otelgrpc.SentEvents),
			otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
			otelgrpc.WithTracerProvider(o.TracerProvider),
		)))
	}
	return opts
}

// NewForConns builds a Client over connections created with DialOptions.
// image may be nil or the same connection as runtime: both services then
// share it. The Client takes ownership of the connections.
func NewForConns(runtime, image *grpc.ClientConn) *Client {
	c := &Client{conns: []*grpc.ClientConn{runtime}}
	if image == nil {
		image = runtime
	}
	if image != runtime {
		c.conns = append(c.conns, image)
	}
	c.Runtime = runtimeapi.NewRuntimeServiceClient(runtime)
	c.Image = runtimeapi.NewImageServiceClient(image)
	return c
}

// parseEndpoint turns an endpoint in upstream form ("unix:///path") or a
// bare socket path into a gRPC target. Only unix sockets are supported.
func parseEndpoint(endpoint string) (string, error) {
	if endpoint == "" {
		return "", fmt.Errorf("endpoint is empty")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	var path string
	switch u.Scheme {
	case "":
		path = endpoint
	case "unix":
		path = u.Host + u.Path
		if path == "" {
			path = u.Opaque
		}
	default:
		return "", fmt.Errorf("unsupported protocol %q: only unix sockets are supported", u.Scheme)
	}
	if path == "" {
		return "", fmt.Errorf("endpoint has no socket path")
	}
	if filepath.IsAbs(path) {
		return "unix://" + path, nil
	}
	return "unix:" + path, nil
}
