package nodeshutdown

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/node/nodeshutdown/logindfake"
)

// connectLogind connects berth's edge to the private bus.
func connectLogind(t *testing.T, addr string) *Logind {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLogind(conn)
	t.Cleanup(func() { l.Close() })
	return l
}

func TestLogindEdge(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	addr := logindfake.StartBus(t)
	confDir := t.TempDir()
	fake := logindfake.New(t, addr, 5*time.Second, confDir)
	l := connectLogind(t, addr)

	if got, err := l.InhibitDelayMax(ctx); err != nil || got != 5*time.Second {
		t.Fatalf("InhibitDelayMax = %v, %v; want 5s", got, err)
	}

	lock, err := l.InhibitShutdown(ctx)
	if err != nil {
		t.Fatalf("InhibitShutdown: %v", err)
	}
	fake.WaitHeld(os.Getpid(), 1)
	if err := lock.Close(); err != nil {
		t.Fatal(err)
	}
	fake.WaitHeld(os.Getpid(), 0)

	events, err := l.WatchShutdown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Another signal of the interface is not a shutdown.
	fake.Emit("PrepareForSleep", true)
	for _, want := range []bool{true, false} {
		fake.Prepare(want)
		select {
		case got := <-events:
			if got != want {
				t.Errorf("PrepareForShutdown = %v; want %v", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("PrepareForShutdown(%v) not seen", want)
		}
	}

	if err := os.WriteFile(filepath.Join(confDir, logindConfFile), []byte("[Login]\nInhibitDelayMaxSec=40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.ReloadConfig(ctx); err != nil {
		t.Fatalf("ReloadConfig: %v", err)
	}
	if got, err := l.InhibitDelayMax(ctx); err != nil || got != 40*time.Second {
		t.Fatalf("InhibitDelayMax after reload = %v, %v; want 40s", got, err)
	}

	l.Close()
	select {
	case _, ok := <-events:
		if ok {
			t.Error("a value after the connection closed")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end with the connection")
	}
}

func TestPrepareForShutdownSignal(t *testing.T) {
	tests := []struct {
		name       string
		sig        *dbus.Signal
		active, ok bool
		wantErr    bool
	}{
		{name: "shutdown", sig: &dbus.Signal{Path: logindPath, Name: prepareSignal, Body: []any{true}}, active: true, ok: true},
		{name: "cancelled", sig: &dbus.Signal{Path: logindPath, Name: prepareSignal, Body: []any{false}}, ok: true},
		{name: "other signal", sig: &dbus.Signal{Path: logindPath, Name: "org.freedesktop.DBus.NameAcquired", Body: []any{"x"}}},
		{name: "other path", sig: &dbus.Signal{Path: "/elsewhere", Name: prepareSignal, Body: []any{true}}},
		{name: "no value", sig: &dbus.Signal{Path: logindPath, Name: prepareSignal}, wantErr: true},
		{name: "not a bool", sig: &dbus.Signal{Path: logindPath, Name: prepareSignal, Body: []any{"yes"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			active, ok, err := prepareForShutdown(tt.sig)
			if active != tt.active || ok != tt.ok || (err != nil) != tt.wantErr {
				t.Errorf("prepareForShutdown = %v, %v, %v; want %v, %v, error %v", active, ok, err, tt.active, tt.ok, tt.wantErr)
			}
		})
	}
}

// TestWatchShutdownIgnoresImpostors: any client of the bus may emit a
// signal with logind's path, interface and member; only the owner of
// org.freedesktop.login1 is believed (SECURITY.md, finding 6), also when
// the connection has a broader match rule of its own that lets the
// impostor's signal through the bus.
func TestWatchShutdownIgnoresImpostors(t *testing.T) {
	for _, broad := range []bool{false, true} {
		t.Run(map[bool]string{false: "logind's match only", true: "broad match too"}[broad], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			addr := logindfake.StartBus(t)
			fake := logindfake.New(t, addr, 5*time.Second, t.TempDir())
			l := connectLogind(t, addr)
			if broad {
				if err := l.conn.AddMatchSignal(dbus.WithMatchInterface(logindInterface)); err != nil {
					t.Fatal(err)
				}
			}
			events, err := l.WatchShutdown(ctx)
			if err != nil {
				t.Fatal(err)
			}
			impostor, err := dbus.Connect(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer impostor.Close()
			if err := impostor.Emit(logindPath, prepareSignal, true); err != nil {
				t.Fatal(err)
			}
			// The bus keeps the order of one sender's messages, not of two:
			// wait until the impostor's signal has passed the bus (a round
			// trip of its own connection) before logind speaks.
			if err := impostor.BusObject().Call("org.freedesktop.DBus.GetId", 0).Err; err != nil {
				t.Fatal(err)
			}
			fake.Prepare(false)
			select {
			case got := <-events:
				if got {
					t.Fatal("PrepareForShutdown(true) from an impostor was believed")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("logind's PrepareForShutdown(false) not seen")
			}
		})
	}
}
