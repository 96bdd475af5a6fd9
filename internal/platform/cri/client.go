package cri

import (
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Client is berth's connection to a CRI runtime. Runtime and Image are the
// generated gRPC clients behind berth's interceptors: every unary call gets
// the runtime request timeout (image pulls excepted), and every error that
// leaves them is classified (see errors.go), so callers test errors with
// errors.Is(err, cri.ErrNotFound) and never read gRPC codes themselves.
//
// A Client is safe for concurrent use. Close releases the connections.
type Client struct {
	Runtime runtimeapi.RuntimeServiceClient
	Image   runtimeapi.ImageServiceClient

	conns []*grpc.ClientConn
}

// ImageConn is the connection of the image service: on containerd, its
// socket serves containerd's own API too (internal/platform/contentstore).
// It stays the Client's.
func (c *Client) ImageConn() grpc.ClientConnInterface { return c.conns[len(c.conns)-1] }

// Close closes the underlying connections.
func (c *Client) Close() error {
	var first error
	for _, conn := range c.conns {
		if err := conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
