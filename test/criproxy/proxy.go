package criproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// maxMsgSize is the largest message forwarded: the CRI client's own limit
// (upstream's 16 MiB), so a large ListContainers passes.
const maxMsgSize = 16 << 20

// Proxy forwards a kubelet's CRI calls to the runtime, with faults. Its
// methods are safe for concurrent use.
type Proxy struct {
	socket  string
	backend *grpc.ClientConn
	srv     *grpc.Server
	lis     net.Listener

	mu sync.Mutex // guards the fields below
	// faults are the faults set, in the order Inject added them.
	faults []Fault
	// cleared is closed by Clear, releasing the calls held by Hang.
	cleared chan struct{}
	// calls counts the calls of each method (full name) the proxy saw.
	calls map[string]int
}

// Start serves the proxy on socket (replacing a stale socket file) and
// forwards to the runtime at runtimeSocket (a path, or unix:///path).
func Start(socket, runtimeSocket string) (*Proxy, error) {
	target := runtimeSocket
	if len(target) > 0 && target[0] == '/' {
		target = "unix://" + target
	}
	backend, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)))
	if err != nil {
		return nil, fmt.Errorf("connect to the runtime %q: %w", runtimeSocket, err)
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		backend.Close()
		return nil, fmt.Errorf("remove stale socket %q: %w", socket, err)
	}
	lis, err := net.Listen("unix", socket)
	if err != nil {
		backend.Close()
		return nil, fmt.Errorf("listen on %q: %w", socket, err)
	}
	p := &Proxy{socket: socket, backend: backend, lis: lis, cleared: make(chan struct{}), calls: map[string]int{}}
	p.srv = grpc.NewServer(grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodecV2(rawCodec{}),
		grpc.MaxRecvMsgSize(maxMsgSize), grpc.MaxSendMsgSize(maxMsgSize))
	go func() { _ = p.srv.Serve(lis) }()
	return p, nil
}

// Socket is the path the proxy serves on.
func (p *Proxy) Socket() string { return p.socket }

// Inject adds a fault; the first fault set that matches a call applies.
func (p *Proxy) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
}

// Clear removes every fault and releases the calls held by a Hang.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
	close(p.cleared)
	p.cleared = make(chan struct{})
}

// Calls is how many calls of method (a name or a full name) the proxy saw.
func (p *Proxy) Calls(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	f := Fault{Method: method}
	for m, c := range p.calls {
		if f.matches(m) {
			n += c
		}
	}
	return n
}

// Stop ends every call and closes the socket and the runtime connection.
func (p *Proxy) Stop() {
	p.Clear()
	p.srv.Stop()
	p.backend.Close()
	_ = os.Remove(p.socket)
}

// take counts a call of fullMethod and returns the fault that applies to
// it (nil for none) and the channel Clear closes.
func (p *Proxy) take(fullMethod string) (*Fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[fullMethod]++
	f, left := pick(p.faults, fullMethod)
	p.faults = left
	return f, p.cleared
}

// inject performs the fault on the call: a nil error forwards it.
func inject(ctx context.Context, f *Fault, cleared <-chan struct{}) error {
	if f == nil {
		return nil
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if f.Hang {
		select {
		case <-cleared:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if f.Code != 0 {
		if f.Message != "" {
			return status.Error(f.Code, f.Message)
		}
		return status.Errorf(f.Code, "criproxy: injected %s", f.Code)
	}
	return nil
}

// forward is the handler of every call: the fault first, then the call
// forwarded to the runtime as a stream of raw messages both ways, with
// the caller's metadata, the runtime's headers and trailers, and the
// runtime's status.
func (p *Proxy) forward(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "criproxy: no method")
	}
	f, cleared := p.take(method)
	if err := inject(ss.Context(), f, cleared); err != nil {
		return err
	}
	md, _ := metadata.FromIncomingContext(ss.Context())
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), md.Copy()))
	defer cancel()
	cs, err := p.backend.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return err
	}
	go func() {
		for {
			var m frame
			if err := ss.RecvMsg(&m); err != nil {
				if errors.Is(err, io.EOF) {
					_ = cs.CloseSend()
				} else {
					cancel()
				}
				return
			}
			if err := cs.SendMsg(&m); err != nil {
				return
			}
		}
	}()
	if hdr, err := cs.Header(); err == nil {
		_ = ss.SendHeader(hdr)
	}
	for {
		var m frame
		if err := cs.RecvMsg(&m); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(&m); err != nil {
			return err
		}
	}
}

// frame is one message, undecoded.
type frame struct{ data []byte }

// rawCodec passes messages through as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("criproxy: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(f.data)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("criproxy: cannot unmarshal into %T", v)
	}
	f.data = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }
