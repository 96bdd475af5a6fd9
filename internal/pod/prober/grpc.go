package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// grpcProbe calls grpc.health.v1.Health/Check for service at host:port
// over plaintext within the timeout; SERVING is success, anything else a
// failure with upstream's messages.
func grpcProbe(ctx context.Context, host string, port int, service, userAgent string, timeout time.Duration) (outcome, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(userAgent))
	if err != nil {
		return outcomeFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		return outcomeFailure, grpcFailure(addr, timeout, err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outcomeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return outcomeSuccess, "service healthy", nil
}

// grpcFailure words a failed Check as upstream does.
func grpcFailure(addr string, timeout time.Duration, err error) string {
	st, ok := status.FromError(err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (ok && st.Code() == codes.DeadlineExceeded):
		return fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err)
	case ok && st.Code() == codes.Unimplemented:
		return fmt.Sprintf("this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
	}
	return fmt.Sprintf("error: health rpc probe failed: %+v", err)
}
