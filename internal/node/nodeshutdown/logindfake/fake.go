package logindfake

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// The D-Bus names of logind and systemd, as the real ones have them.
const (
	logindService    = "org.freedesktop.login1"
	logindPath       = dbus.ObjectPath("/org/freedesktop/login1")
	logindInterface  = "org.freedesktop.login1.Manager"
	systemdService   = "org.freedesktop.systemd1"
	systemdPath      = dbus.ObjectPath("/org/freedesktop/systemd1")
	systemdInterface = "org.freedesktop.systemd1.Manager"
	// ConfFile is the drop-in KillUnit reads, upstream kubelet's name.
	ConfFile = "99-kubelet.conf"
)

// Daemon is where Debian's dbus-daemon package puts the daemon.
const Daemon = "/usr/bin/dbus-daemon"

// busConfig is a session-like dbus-daemon configuration: one socket in the
// test's directory, anyone may own any name and call anything.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// StartBus runs a private dbus-daemon for the test, stopped at its end,
// and returns its address.
func StartBus(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(Daemon); err != nil {
		t.Fatalf("this test needs %s (Debian's dbus-daemon package; hack/node-setup.sh installs it): %v", Daemon, err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, filepath.Join(dir, "bus.sock")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Daemon, "--config-file="+conf, "--print-address", "--nofork", "--nopidfile")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dbus-daemon stderr:\n%s", stderr.String())
		}
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read dbus-daemon address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// Logind is the fake. Its methods are safe for concurrent use.
type Logind struct {
	t       testing.TB
	conn    *dbus.Conn
	props   *prop.Properties
	confDir string
	// mu guards pipes (both ends of every pipe handed out, kept open) and
	// closed (the test is over: no more pipes).
	mu     sync.Mutex
	pipes  [][2]*os.File
	closed bool
	// ignoreReload: KillUnit leaves the delay as it is.
	ignoreReload atomic.Bool
}

// New exports a fake logind whose InhibitDelayMaxUSec is delay on the bus
// at addr; KillUnit reads confDir/ConfFile.
func New(t testing.TB, addr string, delay time.Duration, confDir string) *Logind {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	f := &Logind{t: t, conn: conn, confDir: confDir}
	t.Cleanup(func() {
		conn.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.closed = true
		for _, p := range f.pipes {
			p[0].Close()
			p[1].Close()
		}
	})
	if err := conn.Export(manager{f}, logindPath, logindInterface); err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(systemdManager{f}, systemdPath, systemdInterface); err != nil {
		t.Fatal(err)
	}
	f.props, err = prop.Export(conn, logindPath, prop.Map{logindInterface: {
		"InhibitDelayMaxUSec": {Value: uint64(delay / time.Microsecond), Emit: prop.EmitTrue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{logindService, systemdService} {
		if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
			t.Fatalf("own %s: %v, %v", name, reply, err)
		}
	}
	return f
}

// IgnoreReload makes KillUnit leave the delay as it is (a logind that keeps
// a smaller InhibitDelayMaxSec).
func (f *Logind) IgnoreReload() { f.ignoreReload.Store(true) }

// ConfDir is the drop-in directory KillUnit reads.
func (f *Logind) ConfDir() string { return f.confDir }

// manager is org.freedesktop.login1.Manager.
type manager struct{ f *Logind }

// Inhibit hands out the write end of a new pipe.
func (m manager) Inhibit(what, _, _, mode string) (dbus.UnixFD, *dbus.Error) {
	if what != "shutdown" || mode != "delay" {
		return -1, dbus.MakeFailedError(fmt.Errorf("fake logind: unexpected inhibitor %q mode %q", what, mode))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	f := m.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		r.Close()
		w.Close()
		return -1, dbus.MakeFailedError(fmt.Errorf("fake logind: closed"))
	}
	f.pipes = append(f.pipes, [2]*os.File{r, w})
	return dbus.UnixFD(w.Fd()), nil
}

// systemdManager is org.freedesktop.systemd1.Manager, KillUnit only.
type systemdManager struct{ f *Logind }

// KillUnit re-reads the delay from the drop-in on SIGHUP to logind.
func (s systemdManager) KillUnit(unit, _ string, signal int32) *dbus.Error {
	if unit != "systemd-logind.service" || signal != int32(syscall.SIGHUP) || s.f.ignoreReload.Load() {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.f.confDir, ConfFile))
	if err != nil {
		return dbus.MakeFailedError(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "InhibitDelayMaxSec="); ok {
			sec, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return dbus.MakeFailedError(err)
			}
			s.f.props.SetMust(logindInterface, "InhibitDelayMaxUSec", sec*uint64(time.Second/time.Microsecond))
		}
	}
	return nil
}

// Prepare emits PrepareForShutdown(active).
func (f *Logind) Prepare(active bool) {
	f.t.Helper()
	if err := f.conn.Emit(logindPath, logindInterface+".PrepareForShutdown", active); err != nil {
		f.t.Fatal(err)
	}
}

// Emit emits another signal of logind's interface.
func (f *Logind) Emit(member string, values ...any) {
	f.t.Helper()
	if err := f.conn.Emit(logindPath, logindInterface+"."+member, values...); err != nil {
		f.t.Fatal(err)
	}
}

// Held counts the inhibitor locks process pid holds: descriptors of a
// handed-out pipe in /proc/<pid>/fd, less the two the fake keeps of each
// when pid is this process. A released lock leaves none.
func (f *Logind) Held(pid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	pipes := map[string]bool{}
	for _, p := range f.pipes {
		target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", p[0].Fd()))
		if err != nil {
			f.t.Fatal(err)
		}
		pipes[target] = true
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	refs := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && pipes[target] {
			refs++
		}
	}
	if pid == os.Getpid() {
		refs -= 2 * len(f.pipes)
	}
	return refs
}

// WaitHeld waits until process pid holds exactly want locks.
func (f *Logind) WaitHeld(pid, want int) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.Held(pid) != want {
		if time.Now().After(deadline) {
			f.t.Fatalf("inhibitor locks held by %d: %d; want %d", pid, f.Held(pid), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
