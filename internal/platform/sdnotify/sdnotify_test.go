package sdnotify

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"os"

	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

// listen opens a unixgram NOTIFY_SOCKET of the test's own, as systemd does.
func listen(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return conn
}

// next reads the next datagram, or "" when none comes within wait.
func next(t *testing.T, conn *net.UnixConn, wait time.Duration) string {
	t.Helper()
	buf := make([]byte, 1024)
	if err := conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestReady(t *testing.T) {
	conn := listen(t)
	_, ctx := ktesting.NewTestContext(t)
	n, err := New(Config{Clock: testingclock.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	n.Ready(ctx)
	if got := next(t, conn, 10*time.Second); got != "READY=1" {
		t.Errorf("got %q; want READY=1", got)
	}
}

// TestWatchdogFollowsHealth: a ping at start and on every tick of half the
// timeout while healthy; none while the health check fails.
func TestWatchdogFollowsHealth(t *testing.T) {
	conn := listen(t)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	clk := testingclock.NewFakeClock(time.Now())
	var unhealthy atomic.Bool
	n, err := New(Config{Clock: clk, WatchdogTimeout: 10 * time.Second, Health: func() error {
		if unhealthy.Load() {
			return errors.New("PLEG is not healthy")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	if got := next(t, conn, 10*time.Second); got != "WATCHDOG=1" {
		t.Fatalf("first ping %q; want WATCHDOG=1", got)
	}
	waitTicker(t, clk)
	clk.Step(5 * time.Second)
	if got := next(t, conn, 10*time.Second); got != "WATCHDOG=1" {
		t.Fatalf("ping after half the timeout %q; want WATCHDOG=1", got)
	}
	unhealthy.Store(true)
	clk.Step(5 * time.Second)
	if got := next(t, conn, 300*time.Millisecond); got != "" {
		t.Fatalf("pinged %q while unhealthy", got)
	}
	unhealthy.Store(false)
	clk.Step(5 * time.Second)
	if got := next(t, conn, 10*time.Second); got != "WATCHDOG=1" {
		t.Fatalf("ping after recovery %q; want WATCHDOG=1", got)
	}
}

func waitTicker(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("watchdog ticker never started")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchdogFromEnv(t *testing.T) {
	tests := []struct {
		name, usec, pid string
		want            time.Duration
		wantErr         bool
	}{
		{name: "unset"},
		{name: "set", usec: "30000000", want: 30 * time.Second},
		{name: "for another process", usec: "30000000", pid: "1"},
		{name: "for this process", usec: "30000000", pid: "self", want: 30 * time.Second},
		{name: "garbage", usec: "soon", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("WATCHDOG_USEC", tt.usec)
			pid := tt.pid
			if pid == "self" {
				pid = strconv.Itoa(os.Getpid())
			}
			t.Setenv("WATCHDOG_PID", pid)
			got, err := WatchdogFromEnv()
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("WatchdogFromEnv() = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNewRejectsTinyWatchdog(t *testing.T) {
	_, err := New(Config{Clock: testingclock.NewFakeClock(time.Now()), WatchdogTimeout: time.Second, Health: func() error { return nil }})
	if err == nil {
		t.Error("New accepted a 1s watchdog timeout")
	}
}
