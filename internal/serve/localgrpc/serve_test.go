package localgrpc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestServeStopsWithinBudget: a stream that never ends on its own (the
// health service's Watch, which a graceful stop waits for) is cut once
// StopBudget has passed after the context ended; Serve returns nil.
func TestServeStopsWithinBudget(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sub", "s.sock")
	l, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != DirMode {
		t.Errorf("socket directory: %v, %v; want mode %o", fi, err, DirMode)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, clk, "test", sock, srv, l) }()

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	watch, err := healthpb.NewHealthClient(conn).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() { // Serve waits on the budget: the graceful stop is stuck on the watch
		if time.Now().After(deadline) {
			t.Fatal("Serve does not wait on its stop budget")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned before the budget passed: %v", err)
	default:
	}
	clk.Step(StopBudget)
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := watch.Recv(); err == nil {
		t.Error("the watch goes on after the stop")
	}
}

// TestListenReplacesStaleSocket: a file where the socket goes is
// replaced; one that cannot be removed is an error.
func TestListenReplacesStaleSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	if err := os.WriteFile(sock, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("%s after Listen: %v, %v; want a socket", sock, fi, err)
	}
	dir := filepath.Join(t.TempDir(), "full")
	if err := os.MkdirAll(filepath.Join(dir, "s.sock", "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(filepath.Join(dir, "s.sock")); err == nil {
		t.Error("Listen over a non-empty directory succeeded")
	}
}
