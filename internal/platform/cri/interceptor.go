package cri

import (
	"context"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Call is the report of one CRI call.
type Call struct {
	// Method is the short method name ("ContainerStatus").
	Method string
	// Request is the request message of a unary call (nil for streams).
	// It is shared with the caller: observers must not modify it.
	Request any
	// Start is when the call began; Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Err is the classified error, nil on success.
	Err error
}

// ObserveFunc receives one report per CRI call. It is berth's single
// instrumentation hook; it must be safe for concurrent use and must not
// block.
type ObserveFunc func(Call)

// interceptors holds what the unary and stream interceptors need. It is
// immutable after construction and safe for concurrent use.
type interceptors struct {
	timeout time.Duration
	observe ObserveFunc
	clock   clock.PassiveClock
}

// unary applies the request timeout, classifies the error and reports the
// call to Observe.
func (in interceptors) unary(ctx context.Context, fullMethod string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	method := shortMethod(fullMethod)
	if d, ok := callTimeout(method, req, in.timeout); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	start := in.clock.Now()
	err := classify(method, invoker(ctx, fullMethod, req, reply, cc, opts...))
	if in.observe != nil {
		in.observe(Call{Method: method, Request: req, Start: start, Duration: in.clock.Since(start), Err: err})
	}
	return err
}

// stream classifies the error of opening a stream and of every received
// message. Streams get no timeout: they last as long as their context.
func (in interceptors) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, fullMethod string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	method := shortMethod(fullMethod)
	start := in.clock.Now()
	cs, err := streamer(ctx, desc, cc, fullMethod, opts...)
	err = classify(method, err)
	if in.observe != nil {
		in.observe(Call{Method: method, Start: start, Duration: in.clock.Since(start), Err: err})
	}
	if err != nil {
		return nil, err
	}
	return classifiedStream{ClientStream: cs, method: method}, nil
}

// classifiedStream classifies the errors of an open stream; io.EOF, the
// normal end of a stream, passes unchanged.
type classifiedStream struct {
	grpc.ClientStream
	method string
}

func (s classifiedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil || err == io.EOF {
		return err
	}
	return classify(s.method, err)
}

func (s classifiedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err == nil || err == io.EOF {
		return err
	}
	return classify(s.method, err)
}

// callTimeout returns the deadline berth gives a unary call, following the
// upstream kubelet's CRI client: base is the runtime request timeout;
// PullImage has none (pulls take as long as they take, bounded by the
// caller's context); RunPodSandbox gets twice the base; StopContainer and
// ExecSync get their own grace period on top of the base (ExecSync without
// a command timeout has none); CheckpointContainer gets the larger of its own
// timeout and the base. A base of zero disables all timeouts. An earlier
// deadline already on the context always wins, since context.WithTimeout
// never extends one.
func callTimeout(method string, req any, base time.Duration) (time.Duration, bool) {
	if base <= 0 {
		return 0, false
	}
	switch method {
	case "PullImage":
		return 0, false
	case "RunPodSandbox":
		return 2 * base, true
	case "StopContainer":
		if r, ok := req.(*runtimeapi.StopContainerRequest); ok && r.GetTimeout() > 0 {
			return base + time.Duration(r.GetTimeout())*time.Second, true
		}
	case "ExecSync":
		if r, ok := req.(*runtimeapi.ExecSyncRequest); ok {
			if r.GetTimeout() <= 0 {
				return 0, false
			}
			return base + time.Duration(r.GetTimeout())*time.Second, true
		}
	case "CheckpointContainer":
		if r, ok := req.(*runtimeapi.CheckpointContainerRequest); ok {
			if own := time.Duration(r.GetTimeout()) * time.Second; own > base {
				return own, true
			}
		}
	}
	return base, true
}

// shortMethod turns "/runtime.v1.RuntimeService/ContainerStatus" into
// "ContainerStatus".
func shortMethod(fullMethod string) string {
	if i := strings.LastIndexByte(fullMethod, '/'); i >= 0 {
		return fullMethod[i+1:]
	}
	return fullMethod
}
