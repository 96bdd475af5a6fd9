package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/pluginmanager/pluginfake"
)

const testType = "TestPlugin"

// call is one Handler call a test handler saw.
type call struct {
	Method, Name, Endpoint string
	Versions               []string
}

// testHandler records its calls; validateErr and registerErr make
// ValidatePlugin and RegisterPlugin fail.
type testHandler struct {
	validateErr, registerErr error
	mu                       sync.Mutex // guards calls
	calls                    []call
}

var _ Handler = (*testHandler)(nil)

func (h *testHandler) record(c call) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
}

func (h *testHandler) Calls() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]call(nil), h.calls...)
}

func (h *testHandler) ValidatePlugin(_ context.Context, name, endpoint string, versions []string) error {
	h.record(call{"validate", name, endpoint, versions})
	return h.validateErr
}

func (h *testHandler) RegisterPlugin(_ context.Context, name, endpoint string, versions []string, timeout *time.Duration) error {
	if timeout != nil {
		return fmt.Errorf("timeout %v, want nil as upstream", *timeout)
	}
	h.record(call{"register", name, endpoint, versions})
	return h.registerErr
}

func (h *testHandler) DeRegisterPlugin(_ context.Context, name, endpoint string) {
	h.record(call{"deregister", name, endpoint, nil})
}

// socketDir returns a fresh directory with a path short enough for unix
// sockets (t.TempDir's can pass the 108-byte limit).
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

var t0 = time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)

// start runs a manager of dir with handlers on clk until the test ends
// (or stop is called), and checks Run returns nil.
func start(t *testing.T, dir string, clk *testingclock.FakeClock, handlers map[string]Handler) (m *Manager, stop func()) {
	t.Helper()
	return startWith(t, Config{Dir: dir, Clock: clk, Handlers: handlers})
}

// startWith is start with the whole Config.
func startWith(t *testing.T, cfg Config) (m *Manager, stop func()) {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return m, stop
}

// waitFor polls cond; the bound only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func regs(m *Manager) []Plugin { return m.Snapshot().Registered }

func TestRegistersPlugins(t *testing.T) {
	dir := socketDir(t)
	h := &testHandler{}
	m, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: h})
	waitFor(t, "the manager to watch", func() bool { _, err := os.Stat(dir); return err == nil })
	// Sockets created once the manager runs: one plugin serves where it
	// registers, the other names another endpoint.
	a := filepath.Join(dir, "a.sock")
	b := filepath.Join(dir, "b.sock")
	pa := pluginfake.Start(t, a, pluginfake.Config{Type: testType, Name: "a.example.com", Versions: []string{"v1"}})
	pb := pluginfake.Start(t, b, pluginfake.Config{Type: testType, Name: "b.example.com", Endpoint: "/run/b/csi.sock", Versions: []string{"v1", "v2"}})
	waitFor(t, "both plugins registered", func() bool { return len(regs(m)) == 2 })
	want := []Plugin{
		{SocketPath: a, Type: testType, Name: "a.example.com", Endpoint: a, Versions: []string{"v1"}},
		{SocketPath: b, Type: testType, Name: "b.example.com", Endpoint: "/run/b/csi.sock", Versions: []string{"v1", "v2"}},
	}
	if diff := cmp.Diff(want, regs(m)); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	for _, p := range []*pluginfake.Plugin{pa, pb} {
		if diff := cmp.Diff([]pluginfake.Status{{Registered: true}}, p.Statuses()); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
	}
	calls := map[string][]call{}
	for _, c := range h.Calls() {
		calls[c.Name] = append(calls[c.Name], c)
	}
	wantCalls := map[string][]call{
		"a.example.com": {{"validate", "a.example.com", a, []string{"v1"}}, {"register", "a.example.com", a, []string{"v1"}}},
		"b.example.com": {{"validate", "b.example.com", "/run/b/csi.sock", []string{"v1", "v2"}}, {"register", "b.example.com", "/run/b/csi.sock", []string{"v1", "v2"}}},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}
}

// TestRefusals: a plugin of a type without a handler, or that its handler
// refuses, is told why in upstream's words and is not registered. The
// fake clock does not move, so there is no retry.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		typ       string
		handler   *testHandler
		want      string // the status's error; %s is the socket
		wantCalls []string
	}{
		{name: "no handler for the type", typ: "CSIPlugin", handler: &testHandler{},
			want: "RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket %s"},
		{name: "validation fails", typ: testType, handler: &testHandler{validateErr: errors.New("no supported version")},
			want: "RegisterPlugin error -- plugin validation failed with err: no supported version", wantCalls: []string{"validate"}},
		{name: "registration fails", typ: testType, handler: &testHandler{registerErr: errors.New("driver name taken")},
			want: "RegisterPlugin error -- plugin registration failed with err: driver name taken", wantCalls: []string{"validate", "register"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := socketDir(t)
			sock := filepath.Join(dir, "p.sock")
			p := pluginfake.Start(t, sock, pluginfake.Config{Type: tc.typ, Name: "p.example.com", Versions: []string{"v1"}})
			m, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: tc.handler})
			waitFor(t, "a status", func() bool { return len(p.Statuses()) > 0 })
			want := []pluginfake.Status{{Registered: false, Error: tc.want}}
			if tc.typ == "CSIPlugin" {
				want[0].Error = fmt.Sprintf(tc.want, sock)
			}
			if diff := cmp.Diff(want, p.Statuses()); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			var methods []string
			for _, c := range tc.handler.Calls() {
				methods = append(methods, c.Method)
			}
			if diff := cmp.Diff(tc.wantCalls, methods); diff != "" {
				t.Errorf("handler calls (-want +got):\n%s", diff)
			}
			if got := regs(m); len(got) != 0 {
				t.Errorf("registered %v, want none", got)
			}
		})
	}
}

// TestRemovedSocketDeregisters: the plugin's socket goes (it stops), and
// its handler is told, with the name and endpoint it registered.
func TestRemovedSocketDeregisters(t *testing.T) {
	dir := socketDir(t)
	sock := filepath.Join(dir, "p.sock")
	p := pluginfake.Start(t, sock, pluginfake.Config{Type: testType, Name: "p.example.com", Endpoint: "/run/p.sock"})
	h := &testHandler{}
	m, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: h})
	waitFor(t, "the plugin registered", func() bool { return len(regs(m)) == 1 })
	p.Stop()
	waitFor(t, "the plugin deregistered", func() bool { return len(regs(m)) == 0 })
	calls := h.Calls()
	if diff := cmp.Diff(call{"deregister", "p.example.com", "/run/p.sock", nil}, calls[len(calls)-1]); diff != "" {
		t.Errorf("last handler call (-want +got):\n%s", diff)
	}
	if got := m.Snapshot().Desired; len(got) != 0 {
		t.Errorf("desired %v after the socket went, want none", got)
	}
}

// TestRecreatedSocketRegistersAgain: a plugin that restarts (its socket
// removed and made again) is deregistered and registered again.
func TestRecreatedSocketRegistersAgain(t *testing.T) {
	dir := socketDir(t)
	sock := filepath.Join(dir, "p.sock")
	cfg := pluginfake.Config{Type: testType, Name: "p.example.com"}
	p := pluginfake.Start(t, sock, cfg)
	h := &testHandler{}
	m, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: h})
	waitFor(t, "the plugin registered", func() bool { return len(regs(m)) == 1 })
	p.Stop()
	again := pluginfake.Start(t, sock, cfg)
	waitFor(t, "the new plugin told it is registered", func() bool { return len(again.Statuses()) == 1 })
	var methods []string
	for _, c := range h.Calls() {
		methods = append(methods, c.Method)
	}
	if diff := cmp.Diff([]string{"validate", "register", "deregister", "validate", "register"}, methods); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}
	waitFor(t, "the plugin registered once", func() bool { return len(regs(m)) == 1 })
}

// TestFailedGetInfoBacksOff: a plugin whose GetInfo fails is asked again
// 500 ms later, then 1 s after that, on the injected clock.
func TestFailedGetInfoBacksOff(t *testing.T) {
	dir := socketDir(t)
	p := pluginfake.Start(t, filepath.Join(dir, "p.sock"), pluginfake.Config{Type: testType, Name: "p.example.com", FailGetInfo: 2})
	clk := testingclock.NewFakeClock(t0)
	m, _ := start(t, dir, clk, map[string]Handler{testType: &testHandler{}})
	for i, delay := range []time.Duration{500 * time.Millisecond, time.Second} {
		waitFor(t, fmt.Sprintf("GetInfo call %d", i+1), func() bool { return p.GetInfoCalls() == i+1 })
		waitFor(t, "the retry timer", clk.HasWaiters)
		clk.Step(delay - time.Millisecond)
		time.Sleep(50 * time.Millisecond) // a retry now would be too early
		if got := p.GetInfoCalls(); got != i+1 {
			t.Fatalf("GetInfo called %d times %v after failure %d; want no retry before %v", got, delay-time.Millisecond, i+1, delay)
		}
		clk.Step(time.Millisecond)
	}
	waitFor(t, "the plugin registered", func() bool { return len(regs(m)) == 1 })
	if got := p.GetInfoCalls(); got != 3 {
		t.Errorf("GetInfo called %d times, want 3", got)
	}
	if diff := cmp.Diff([]pluginfake.Status{{Registered: true}}, p.Statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestRestartFindsSockets: plugins do not register again when berth
// restarts; a new manager finds their sockets (in subdirectories too,
// and one created while no manager ran) and registers them.
func TestRestartFindsSockets(t *testing.T) {
	dir := socketDir(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	cfg := pluginfake.Config{Type: testType, Name: "p.example.com"}
	a := pluginfake.Start(t, filepath.Join(dir, "a.sock"), cfg)
	b := pluginfake.Start(t, filepath.Join(dir, "sub", "b.sock"), cfg)
	m, stop := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: &testHandler{}})
	waitFor(t, "the plugins registered", func() bool { return len(regs(m)) == 2 })
	stop()
	c := pluginfake.Start(t, filepath.Join(dir, "c.sock"), cfg)

	h := &testHandler{}
	again, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: h})
	waitFor(t, "the plugins registered again", func() bool { return len(regs(again)) == 3 })
	for name, p := range map[string]*pluginfake.Plugin{"a": a, "b": b} {
		if diff := cmp.Diff([]pluginfake.Status{{Registered: true}, {Registered: true}}, p.Statuses()); diff != "" {
			t.Errorf("%s's statuses (-want +got):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff([]pluginfake.Status{{Registered: true}}, c.Statuses()); diff != "" {
		t.Errorf("c's statuses (-want +got):\n%s", diff)
	}
	if got := len(h.Calls()); got != 6 {
		t.Errorf("the new handler had %d calls, want 6 (validate and register three plugins)", got)
	}
}

// TestIgnores: files that are not sockets, names starting with ".", and
// symlinks (to a socket, to a directory holding one) outside the
// directory are never desired nor dialled, whether there at start or
// created later.
func TestIgnores(t *testing.T) {
	dir, outside := socketDir(t), socketDir(t)
	cfg := pluginfake.Config{Type: testType, Name: "p.example.com"}
	var never []*pluginfake.Plugin
	never = append(never, pluginfake.Start(t, filepath.Join(outside, "out.sock"), cfg))
	symlink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(prefix string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, prefix+"notes.txt"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		never = append(never, pluginfake.Start(t, filepath.Join(dir, "."+prefix+"hidden.sock"), cfg))
		if err := os.Mkdir(filepath.Join(dir, "."+prefix+"hidden"), 0o750); err != nil {
			t.Fatal(err)
		}
		never = append(never, pluginfake.Start(t, filepath.Join(dir, "."+prefix+"hidden", "in.sock"), cfg))
		symlink(filepath.Join(outside, "out.sock"), filepath.Join(dir, prefix+"link.sock"))
		symlink(outside, filepath.Join(dir, prefix+"linkdir"))
	}
	plant("")
	m, _ := start(t, dir, testingclock.NewFakeClock(t0), map[string]Handler{testType: &testHandler{}})
	first := filepath.Join(dir, "real.sock")
	pluginfake.Start(t, first, cfg)
	waitFor(t, "the real socket registered", func() bool { return len(regs(m)) == 1 })
	plant("later-")
	// The owner takes the directory's events in order: once the socket
	// made last is desired, the others have been looked at.
	last := filepath.Join(dir, "z.sock")
	pluginfake.Start(t, last, cfg)
	waitFor(t, "the last socket registered", func() bool { return len(regs(m)) == 2 })
	if diff := cmp.Diff([]string{first, last}, m.Snapshot().Desired); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
	for i, p := range never {
		if n := p.GetInfoCalls(); n != 0 {
			t.Errorf("ignored plugin %d had %d GetInfo calls", i, n)
		}
	}
}
