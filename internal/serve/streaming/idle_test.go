package streaming

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// waitWatching blocks until the watcher waits on the fake clock again.
func waitWatching(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("watcher never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestIdleConnClosesAfterTimeoutWithoutTraffic(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	client, backend := net.Pipe()
	defer client.Close()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	ic := &idleConn{Conn: backend, clock: clk}
	ic.touch()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { ic.watch(ctx, 10*time.Second); close(done) }()

	waitWatching(t, clk)
	clk.Step(5 * time.Second)
	if _, err := ic.Write([]byte("traffic")); err != nil {
		t.Fatal(err)
	}
	clk.Step(5 * time.Second) // 5s idle since the write: the watcher waits on
	waitWatching(t, clk)
	if _, err := ic.Write([]byte("still open")); err != nil {
		t.Fatalf("connection closed after 5s of idleness: %v", err)
	}
	clk.Step(10 * time.Second)
	<-done
	if _, err := ic.Write([]byte("x")); err == nil {
		t.Fatal("connection still open after the idle timeout")
	}
}

func TestIdleConnWatchEndsWithContext(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	client, backend := net.Pipe()
	defer client.Close()
	defer backend.Close()
	ic := &idleConn{Conn: backend, clock: clk}
	ic.touch()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ic.watch(ctx, time.Minute); close(done) }()
	waitWatching(t, clk)
	cancel()
	<-done
}
