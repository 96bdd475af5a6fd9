package nodesetup

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEnv marks the test binary run as the fake containerd.
const fakeEnv = "BERTH_TEST_FAKE_CONTAINERD"

// Delays of the fakes: together they keep the started process named
// setsid (not containerd) and without a socket for seconds, as a cold
// start does for a shorter while.
const (
	setsidDelay     = "1.5"
	containerdDelay = time.Second
	// fakeLifetime bounds a fake containerd a failed test forgot.
	fakeLifetime = 2 * time.Minute
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeContainerd())
	}
	os.Exit(m.Run())
}

// fakeContainerd takes a moment, then listens on $CONTAINERD_SOCK until
// SIGTERM, as containerd does for this script's purposes.
func fakeContainerd() int {
	time.Sleep(containerdDelay)
	l, err := net.Listen("unix", os.Getenv("CONTAINERD_SOCK"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake containerd:", err)
		return 1
	}
	defer l.Close() // removes the socket
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(fakeLifetime):
	}
	return 0
}

// fakeCtr answers like ctr when the fake containerd's socket exists.
const fakeCtr = `#!/usr/bin/env bash
addr=
while (($#)); do
	case $1 in
	--address) addr=$2; shift 2 ;;
	--connect-timeout) shift 2 ;;
	*) break ;;
	esac
done
[[ -S $addr ]] || { echo "ctr: cannot connect to $addr" >&2; exit 1; }
case "$*" in
version) echo "Server: fake" ;;
"plugins ls") printf 'TYPE ID PLATFORMS STATUS\nio.containerd.grpc.v1 cri linux/amd64 ok\n' ;;
*) echo "fake ctr: $*: unknown" >&2; exit 1 ;;
esac
`

// node is one fake machine: a PATH of fakes, a state directory and a
// socket path, none of them the real ones.
type node struct {
	dir, bin, state, sock, script string
}

func newNode(t *testing.T) *node {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("node-setup.sh runs on Linux")
	}
	realSetsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid on PATH")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "node-setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := &node{dir: dir, bin: filepath.Join(dir, "bin"), state: filepath.Join(dir, "state"),
		sock: filepath.Join(dir, "containerd.sock"), script: script}
	for _, d := range []string{n.bin, n.state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(self, filepath.Join(n.bin, "containerd")); err != nil {
		t.Fatal(err)
	}
	slowSetsid := fmt.Sprintf("#!/usr/bin/env bash\nsleep %s\nexec %q \"$@\"\n", setsidDelay, realSetsid)
	for name, content := range map[string]string{"ctr": fakeCtr, "setsid": slowSetsid} {
		if err := os.WriteFile(filepath.Join(n.bin, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(n.state, "containerd.toml"), []byte("version = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.stopAll)
	return n
}

// start runs the script's start_ourselves for a config of the given hash.
func (n *node) start(t *testing.T, hash string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `source "$1" && CONFIG_PATH=$STATE_DIR/containerd.toml && start_ourselves "$2"`,
		"bash", n.script, hash)
	cmd.Env = append(os.Environ(), "PATH="+n.bin+":"+os.Getenv("PATH"), "BERTH_NODE_STATE="+n.state,
		"CONTAINERD_SOCK="+n.sock, fakeEnv+"=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pid is the pid the script recorded for the containerd it started.
func (n *node) pid(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.state, "containerd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// stopAll stops the process the script recorded, whatever stage of its
// start it is in, if it is still this test's: its command line names this
// node's state directory.
func (n *node) stopAll() {
	b, err := os.ReadFile(filepath.Join(n.state, "containerd.pid"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmdline), n.state) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
}

// isContainerd reports whether pid is a live process named containerd (a
// zombie left to an init that does not reap is not).
func isContainerd(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	name, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasSuffix(name, "(containerd") && !strings.HasPrefix(rest, "Z")
}

// TestStartOnAFreshMachine starts containerd where it never ran: no pid
// file, no socket, and a started process that is not named containerd
// until its exec. The first wait must judge it by its pid (alive), not by
// its name; judging by name, the script said containerd had exited.
func TestStartOnAFreshMachine(t *testing.T) {
	n := newNode(t)
	out, err := n.start(t, "hash-1")
	if err != nil {
		t.Fatalf("start_ourselves on a fresh machine: %v\n%s", err, out)
	}
	first := n.pid(t)
	if want := fmt.Sprintf("started containerd (pid %d", first); !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if !isContainerd(first) {
		t.Fatalf("pid %d is not the fake containerd", first)
	}

	// A second run keeps the containerd it started (same config).
	out, err = n.start(t, "hash-1")
	if err != nil || strings.Contains(out, "started containerd") || n.pid(t) != first {
		t.Errorf("second run: err %v, pid %d (was %d), output:\n%s", err, n.pid(t), first, out)
	}

	// A changed config restarts it, again through the slow start.
	out, err = n.start(t, "hash-2")
	if err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	second := n.pid(t)
	if !strings.Contains(out, fmt.Sprintf("restarting containerd (pid %d)", first)) || second == first {
		t.Errorf("restart: pid %d (was %d), output:\n%s", second, first, out)
	}
	if isContainerd(first) {
		t.Errorf("the old containerd (pid %d) still runs", first)
	}
	if !isContainerd(second) {
		t.Errorf("the new containerd (pid %d) does not run", second)
	}
}
