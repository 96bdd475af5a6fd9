package nodeshutdown

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

// startBus runs a private dbus-daemon for the test and returns its address.
func startBus(t *testing.T) string {
	t.Helper()
	const daemon = "/usr/bin/dbus-daemon"
	if _, err := os.Stat(daemon); err != nil {
		t.Fatalf("these tests need %s (Debian's dbus-daemon package; hack/node-setup.sh installs it): %v", daemon, err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, filepath.Join(dir, "bus.sock")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--print-address", "--nofork", "--nopidfile")
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

// fakeLogind is logind (and the part of systemd that reloads it) on a
// private bus: Inhibit hands out the write end of a pipe, as logind does;
// InhibitDelayMaxUSec is a property; systemd's KillUnit with SIGHUP makes
// it re-read InhibitDelayMaxSec from the drop-in directory.
type fakeLogind struct {
	t       *testing.T
	conn    *dbus.Conn
	props   *prop.Properties
	confDir string
	// mu guards pipes (both ends of every pipe handed out, kept open) and
	// closed (the test is over: no more pipes).
	mu     sync.Mutex
	pipes  [][2]*os.File
	closed bool
	// ignoreReload: KillUnit does not change the delay (a logind that
	// keeps a smaller InhibitDelayMaxSec).
	ignoreReload atomic.Bool
}

func newFakeLogind(t *testing.T, addr string, delay time.Duration, confDir string) *fakeLogind {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeLogind{t: t, conn: conn, confDir: confDir}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.closed = true
		for _, p := range f.pipes {
			p[0].Close()
			p[1].Close()
		}
	})
	if err := conn.Export(f, logindPath, logindInterface); err != nil {
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

// Inhibit is org.freedesktop.login1.Manager.Inhibit.
func (f *fakeLogind) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	if what != "shutdown" || mode != "delay" {
		return -1, dbus.MakeFailedError(fmt.Errorf("fake logind: unexpected inhibitor %q mode %q", what, mode))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1, dbus.MakeFailedError(err)
	}
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
type systemdManager struct{ f *fakeLogind }

// KillUnit re-reads the delay from the drop-in on SIGHUP to logind.
func (s systemdManager) KillUnit(unit, who string, signal int32) *dbus.Error {
	if unit != logindUnit || signal != int32(syscall.SIGHUP) || s.f.ignoreReload.Load() {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.f.confDir, logindConfFile))
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

// prepare emits PrepareForShutdown(active).
func (f *fakeLogind) prepare(active bool) {
	f.t.Helper()
	if err := f.conn.Emit(logindPath, prepareSignal, active); err != nil {
		f.t.Fatal(err)
	}
}

// held counts the inhibitor locks the client (in this process) holds:
// descriptors of a handed-out pipe beyond the two the fake keeps, found in
// /proc/self/fd. A lock released by the client leaves only the fake's.
func (f *fakeLogind) held() int {
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
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		f.t.Fatal(err)
	}
	refs := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && pipes[target] {
			refs++
		}
	}
	return refs - 2*len(f.pipes)
}

// waitHeld waits until exactly want locks are held.
func (f *fakeLogind) waitHeld(want int) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for f.held() != want {
		if time.Now().After(deadline) {
			f.t.Fatalf("inhibitor locks held: %d; want %d", f.held(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func dbusConnect(addr string) (*dbus.Conn, error) { return dbus.Connect(addr) }
