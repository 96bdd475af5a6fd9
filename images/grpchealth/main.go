// Command grpchealth is a tiny gRPC server implementing grpc.health.v1, for
// berth's grpc probe tests; hack/images.sh builds it into the image
// localhost/berth/grpc-health:1.0.
//
// It listens on -port (default 9000). The overall service ("") and the
// service "serving" answer SERVING, the service "not-serving" answers
// NOT_SERVING, any other service NOT_FOUND. When the file named by -down
// exists, every known service answers NOT_SERVING. Build it static:
//
//	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o grpc-health ./images/grpchealth
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

type server struct {
	healthpb.UnimplementedHealthServer
	down string
}

func (s *server) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	serving := healthpb.HealthCheckResponse_SERVING
	switch req.GetService() {
	case "", "serving":
	case "not-serving":
		serving = healthpb.HealthCheckResponse_NOT_SERVING
	default:
		return nil, status.Errorf(codes.NotFound, "unknown service %q", req.GetService())
	}
	if s.down != "" {
		if _, err := os.Stat(s.down); err == nil {
			serving = healthpb.HealthCheckResponse_NOT_SERVING
		}
	}
	return &healthpb.HealthCheckResponse{Status: serving}, nil
}

func main() {
	port := flag.Int("port", 9000, "port to listen on")
	down := flag.String("down", "", "while this file exists, report NOT_SERVING")
	flag.Parse()
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, &server{down: *down})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		srv.Stop()
	}()
	fmt.Printf("serving grpc.health.v1 on :%d\n", *port)
	if err := srv.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
