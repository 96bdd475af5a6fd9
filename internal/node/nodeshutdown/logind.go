package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
	"k8s.io/klog/v2"
)

// The logind and systemd D-Bus names berth uses.
const (
	logindService   = "org.freedesktop.login1"
	logindPath      = dbus.ObjectPath("/org/freedesktop/login1")
	logindInterface = "org.freedesktop.login1.Manager"
	prepareSignal   = logindInterface + ".PrepareForShutdown"

	systemdService   = "org.freedesktop.systemd1"
	systemdPath      = dbus.ObjectPath("/org/freedesktop/systemd1")
	systemdInterface = "org.freedesktop.systemd1.Manager"
	logindUnit       = "systemd-logind.service"
)

// Logind is berth's D-Bus edge to systemd-logind: one bus connection. Its
// methods may be called from one goroutine at a time.
type Logind struct {
	conn *dbus.Conn
}

// NewLogind wraps a connection to the bus logind is on.
func NewLogind(conn *dbus.Conn) *Logind { return &Logind{conn: conn} }

// ConnectSystemBus connects to the system bus, where logind is.
func ConnectSystemBus(ctx context.Context) (*Logind, error) {
	conn, err := dbus.ConnectSystemBus(dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("connect to the system bus: %w", err)
	}
	return NewLogind(conn), nil
}

// Close closes the connection; a watch's channel closes with it.
func (l *Logind) Close() error { return l.conn.Close() }

// InhibitDelayMax reads logind's InhibitDelayMaxUSec: how long a delay
// inhibitor lock may hold a shutdown back.
func (l *Logind) InhibitDelayMax(ctx context.Context) (time.Duration, error) {
	var v dbus.Variant
	err := l.conn.Object(logindService, logindPath).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0,
		logindInterface, "InhibitDelayMaxUSec").Store(&v)
	if err != nil {
		return 0, fmt.Errorf("read logind property %q: %w", "InhibitDelayMaxUSec", err)
	}
	usec, ok := v.Value().(uint64)
	if !ok {
		return 0, fmt.Errorf("read logind property %q: %s is not a uint64", "InhibitDelayMaxUSec", v.Signature())
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// InhibitShutdown takes a delay inhibitor lock on shutdown, as upstream's
// kubelet does. The lock holds until the returned file is closed.
func (l *Logind) InhibitShutdown(ctx context.Context) (*os.File, error) {
	var fd dbus.UnixFD
	err := l.conn.Object(logindService, logindPath).CallWithContext(ctx, logindInterface+".Inhibit", 0,
		"shutdown", "kubelet", "Kubelet needs time to handle node shutdown", "delay").Store(&fd)
	if err != nil {
		return nil, fmt.Errorf("take logind inhibitor lock: %w", err)
	}
	if fd < 0 {
		return nil, errors.New("take logind inhibitor lock: no file descriptor in the reply")
	}
	syscall.CloseOnExec(int(fd))
	return os.NewFile(uintptr(fd), "logind-inhibitor"), nil
}

// ReloadConfig asks systemd to send logind SIGHUP, which makes it re-read
// its configuration (upstream's ReloadLogindConf).
func (l *Logind) ReloadConfig(ctx context.Context) error {
	call := l.conn.Object(systemdService, systemdPath).CallWithContext(ctx, systemdInterface+".KillUnit", 0,
		logindUnit, "all", int32(syscall.SIGHUP))
	if call.Err != nil {
		return fmt.Errorf("reload logind configuration: %w", call.Err)
	}
	return nil
}

// WatchShutdown subscribes to logind's PrepareForShutdown signal and
// returns its values: true when a shutdown begins, false when it is
// cancelled. The channel closes when the connection does; the watch ends
// with ctx.
func (l *Logind) WatchShutdown(ctx context.Context) (<-chan bool, error) {
	if err := l.conn.AddMatchSignalContext(ctx, dbus.WithMatchSender(logindService), dbus.WithMatchObjectPath(logindPath),
		dbus.WithMatchInterface(logindInterface), dbus.WithMatchMember("PrepareForShutdown")); err != nil {
		return nil, fmt.Errorf("watch logind PrepareForShutdown: %w", err)
	}
	signals := make(chan *dbus.Signal, 8)
	l.conn.Signal(signals)
	out := make(chan bool)
	go func() {
		defer close(out)
		defer l.conn.RemoveSignal(signals)
		for {
			select {
			case <-ctx.Done():
				return
			case s, ok := <-signals:
				if !ok {
					return
				}
				active, ok, err := prepareForShutdown(s)
				if err != nil {
					klog.FromContext(ctx).Error(err, "Ignoring a malformed logind signal")
				}
				if !ok {
					continue
				}
				if err := l.fromLogind(ctx, s.Sender); err != nil {
					klog.FromContext(ctx).Error(err, "Ignoring a PrepareForShutdown signal")
					continue
				}
				select {
				case out <- active:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// prepareForShutdown reads a PrepareForShutdown signal; ok is false for
// any other signal, and for a malformed one (with an error).
func prepareForShutdown(s *dbus.Signal) (active, ok bool, err error) {
	if s == nil || s.Name != prepareSignal || s.Path != logindPath {
		return false, false, nil
	}
	if len(s.Body) == 0 {
		return false, false, errors.New("PrepareForShutdown has no value")
	}
	active, ok = s.Body[0].(bool)
	if !ok {
		return false, false, fmt.Errorf("PrepareForShutdown value %v is not a bool", s.Body[0])
	}
	return active, true, nil
}

// fromLogind says whether sender, a signal's unique bus name, is the
// current owner of logind's name. Any client of the bus may emit a signal
// with logind's path and interface; only logind owns its name (the system
// bus's policy), so a PrepareForShutdown from anyone else is refused: it
// would end every pod on the node. The match rule asks the bus for
// logind's signals only, but a connection receives every signal any of
// its match rules asks for, so the sender is checked here too. The owner
// is asked each time: signals are rare, and logind may have restarted.
func (l *Logind) fromLogind(ctx context.Context, sender string) error {
	var owner string
	if err := l.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, logindService).Store(&owner); err != nil {
		return fmt.Errorf("ask the owner of %s: %w", logindService, err)
	}
	if sender == "" || sender != owner {
		return fmt.Errorf("sender %q is not %s (owned by %q)", sender, logindService, owner)
	}
	return nil
}
