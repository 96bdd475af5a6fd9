package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/sys/unix"

	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/berthk8s/berth/internal/config"
)

// header starts a standalone configuration: without --kubeconfig the
// kubelet API's webhook authentication and authorization cannot work.
const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
	"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\n"

// harness runs the command against an in-memory file system and a fake agent.
type harness struct {
	stdout, stderr bytes.Buffer
	agentCfg       *config.Config
	agentErr       error
	// logging is the logging configuration applied, nil if none was.
	logging *logsapi.LoggingConfiguration
	// hostSetups counts setupHost calls; setupErr is what they return.
	hostSetups int
	setupErr   error
}

func (h *harness) run(ctx context.Context, files fstest.MapFS, args ...string) int {
	trim := func(name string) string { return strings.TrimPrefix(name, "/") }
	h.logging = nil
	return run(ctx, args, deps{
		stdout: &h.stdout,
		stderr: &h.stderr,
		env: config.Env{
			ReadFile: func(name string) ([]byte, error) { return fs.ReadFile(files, trim(name)) },
			ReadDir:  func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(files, trim(name)) },
			Stat:     func(name string) (fs.FileInfo, error) { return fs.Stat(files, trim(name)) },
			Hostname: func() (string, error) { return "Host-A", nil },
		},
		runAgent: func(_ context.Context, cfg *config.Config) error {
			h.agentCfg = cfg
			return h.agentErr
		},
		applyLogging: func(_ context.Context, cfg *config.Config) error {
			h.logging = cfg.Kubelet.Logging.DeepCopy()
			return nil
		},
		setupHost: func(context.Context, *config.Config) error {
			h.hostSetups++
			return h.setupErr
		},
	})
}

func TestVersion(t *testing.T) {
	var h harness
	if code := h.run(context.Background(), nil, "--version"); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, h.stderr.String())
	}
	if got, want := h.stdout.String(), "berth dev (kubelet v1.37.2)\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if h.agentCfg != nil {
		t.Error("--version must not start the agent")
	}
}

func TestHelp(t *testing.T) {
	var h harness
	if code := h.run(context.Background(), nil, "--help"); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, want := range []string{"Usage:", "--config-dir", "--pod-infra-container-image", "-v, --v", "--max-pods int32", "--cloud-provider string"} {
		if !strings.Contains(h.stdout.String(), want) {
			t.Errorf("help does not mention %q:\n%s", want, h.stdout.String())
		}
	}
	for _, line := range strings.Split(h.stdout.String(), "\n") {
		if strings.Contains(line, "--kubeconfig string") && (strings.Contains(line, "not supported") || !strings.Contains(line, "honoured")) {
			t.Errorf("help on --kubeconfig, which berth honours: %q", line)
		}
	}
}

func TestUnknownFlagsReportedTogether(t *testing.T) {
	var h harness
	if code := h.run(context.Background(), nil, "--max-pod=3", "--network-plugin=cni", "--config=/c.yaml", "--fail-swap"); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	want := "berth: unknown flags (3): --max-pod (did you mean --max-pods (KubeletConfiguration maxPods)?); " +
		"--network-plugin (removed upstream in v1.24 with dockershim: networking is the CRI runtime's job); " +
		"--fail-swap (did you mean --fail-swap-on (KubeletConfiguration failSwapOn)?) (see berth --help)\n"
	if got := h.stderr.String(); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if h.agentCfg != nil {
		t.Error("the agent was started")
	}
}

func TestErrorsExitOneWithoutStarting(t *testing.T) {
	files := fstest.MapFS{
		"bad.yaml":  {Data: []byte(header + "memoryManagerPolicy: BestEffort\niptablesDropBit: 40\n")},
		"typo.yaml": {Data: []byte(header + "staticPodDir: /etc/m\n")},
		"good.yaml": {Data: []byte(header)},
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unsupported fields", []string{"--config=/bad.yaml"}, []string{
			`berth: invalid configuration (2 problems):`,
			`kubeletConfiguration field "memoryManagerPolicy" (set in --config "/bad.yaml"): policy "BestEffort" is not available for platform "linux"`,
			`kubeletConfiguration field "iptablesDropBit" (set in --config "/bad.yaml"): invalid value 40: must be between 0 and 31, inclusive`,
		}},
		{"unknown field", []string{"--config=/typo.yaml"}, []string{`unknown field "staticPodDir"`}},
		{"missing file", []string{"--config=/nope.yaml"}, []string{`read config file "/nope.yaml"`}},
		{"missing kubeconfig", []string{"--config=/good.yaml", "--kubeconfig=/k"}, []string{`flag --kubeconfig: read "/k"`}},
		{"bootstrap kubeconfig without kubeconfig", []string{"--config=/good.yaml", "--bootstrap-kubeconfig=/b"}, []string{"flag --bootstrap-kubeconfig: needs --kubeconfig"}},
		{"invalid field by flag", []string{"--config=/good.yaml", "--runonce"}, []string{
			`flag --runonce sets kubeletConfiguration field "runOnce": invalid value true: Runonce mode has been deprecated and should not be set (upstream v1.37 refuses it)`,
		}},
		{"unknown flag", []string{"--no-such-flag"}, []string{"--no-such-flag", "berth --help"}},
		{"bad flag value", []string{"-v=loud"}, []string{`invalid argument "loud"`}},
		{"positional argument", []string{"run"}, []string{`unknown command "run"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h harness
			if code := h.run(context.Background(), files, tc.args...); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			for _, want := range tc.want {
				if !strings.Contains(h.stderr.String(), want) {
					t.Errorf("stderr does not contain %q:\n%s", want, h.stderr.String())
				}
			}
			if h.agentCfg != nil {
				t.Error("the agent was started with a bad configuration")
			}
		})
	}
}

func TestStartsAgentWithLoadedConfig(t *testing.T) {
	files := fstest.MapFS{"c.yaml": {Data: []byte(header + "staticPodPath: /etc/m\nlogging: {verbosity: 2}\n")}}
	var h harness
	if code := h.run(context.Background(), files, "--config=/c.yaml", "-v", "4", "--logging-format=json"); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, h.stderr.String())
	}
	if h.agentCfg == nil {
		t.Fatal("agent not started")
	}
	if h.agentCfg.NodeName != "host-a" || h.agentCfg.Kubelet.StaticPodPath != "/etc/m" {
		t.Errorf("agent got NodeName %q, staticPodPath %q", h.agentCfg.NodeName, h.agentCfg.Kubelet.StaticPodPath)
	}
	if h.logging == nil || h.logging.Verbosity != 4 || h.agentCfg.Verbosity != 4 {
		t.Errorf("logging applied %+v, config verbosity %d; want 4 from -v over the file's 2", h.logging, h.agentCfg.Verbosity)
	}
	if h.logging != nil && h.logging.Format != "json" {
		t.Errorf("logging format applied %q, want json from --logging-format", h.logging.Format)
	}
}

func TestAgentErrors(t *testing.T) {
	files := fstest.MapFS{"c.yaml": {Data: []byte(header)}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		agentErr error
		wantCode int
	}{
		{"agent fails", context.Background(), errors.New("boom"), 1},
		{"agent returns nil", context.Background(), nil, 0},
		{"stopped by signal", cancelled, context.Canceled, 0},
		{"fails while stopping", cancelled, errors.New("boom"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := harness{agentErr: tc.agentErr}
			if code := h.run(tc.ctx, files, "--config=/c.yaml"); code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr %q", code, tc.wantCode, h.stderr.String())
			}
		})
	}
}

// TestConfigFlagOverridesFile: a flag aliasing a KubeletConfiguration field
// overrides the file, with upstream's deprecation notice on stderr.
func TestConfigFlagOverridesFile(t *testing.T) {
	files := fstest.MapFS{"c.yaml": {Data: []byte(header + "maxPods: 50\n")}}
	var h harness
	if code := h.run(context.Background(), files, "--config=/c.yaml", "--max_pods=20"); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, h.stderr.String())
	}
	if got := h.agentCfg.Kubelet.MaxPods; got != 20 {
		t.Errorf("maxPods = %d, want 20 from --max-pods over the file's 50", got)
	}
	if want := "Flag --max_pods has been deprecated, This parameter should be set via the config file"; !strings.Contains(h.stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", h.stderr.String(), want)
	}
}

// TestHostSetupFailureStops: protectKernelDefaults refusing the kernel's
// tunables (setupHost's error) stops berth before the agent starts.
func TestHostSetupFailureStops(t *testing.T) {
	files := fstest.MapFS{"c.yaml": {Data: []byte(header + "protectKernelDefaults: true\n")}}
	h := harness{setupErr: errors.New("protectKernelDefaults is set and kernel tunables differ")}
	if code := h.run(context.Background(), files, "--config=/c.yaml"); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if h.hostSetups != 1 || h.agentCfg != nil {
		t.Errorf("setupHost calls %d, agent started %v; want 1 call and no agent", h.hostSetups, h.agentCfg != nil)
	}
	if !strings.Contains(h.stderr.String(), "kernel tunables differ") {
		t.Errorf("stderr %q lacks the setup error", h.stderr.String())
	}
}

// TestExitOnLockContention: with --lock-file and --exit-on-lock-contention
// berth holds the lock while the agent runs, and stops cleanly (exit 0)
// when another process opens the file, as upstream.
func TestExitOnLockContention(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "kubelet.lock")
	files := fstest.MapFS{"c.yaml": {Data: []byte(header)}}
	running := make(chan struct{})
	stopped := make(chan error, 1)
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--config=/c.yaml", "--lock-file=" + lock, "--exit-on-lock-contention"}, deps{
			stdout: io.Discard, stderr: &stderr,
			env: config.Env{
				ReadFile: func(name string) ([]byte, error) { return fs.ReadFile(files, strings.TrimPrefix(name, "/")) },
				ReadDir:  func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(files, strings.TrimPrefix(name, "/")) },
				Hostname: func() (string, error) { return "host-a", nil },
			},
			runAgent: func(ctx context.Context, _ *config.Config) error {
				close(running)
				<-ctx.Done()
				stopped <- context.Cause(ctx)
				return ctx.Err()
			},
			applyLogging: func(context.Context, *config.Config) error { return nil },
			setupHost:    func(context.Context, *config.Config) error { return nil },
		})
	}()
	<-running
	// The lock is held (seen without opening the file, which would stop
	// berth): /proc/locks lists a FLOCK on its inode.
	if !flocked(t, lock) {
		t.Fatal("berth runs without holding the lock file")
	}
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	select {
	case cause := <-stopped:
		if !errors.Is(cause, errLockContention) {
			t.Errorf("agent stopped by %v; want lock contention", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agent not stopped after the lock file was opened")
	}
	if code := <-done; code != 0 {
		t.Errorf("exit code %d; want 0; stderr %q", code, stderr.String())
	}
	// berth released the lock on the way out.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("flock after berth stopped: %v", err)
	}
}

func TestExitOnLockContentionNeedsLockFile(t *testing.T) {
	files := fstest.MapFS{"c.yaml": {Data: []byte(header)}}
	var h harness
	if code := h.run(context.Background(), files, "--config=/c.yaml", "--exit-on-lock-contention"); code != 1 || h.agentCfg != nil {
		t.Fatalf("exit code %d, agent started %v; want 1 without starting", code, h.agentCfg != nil)
	}
	if want := "cannot exit on lock file contention: no lock file specified"; !strings.Contains(h.stderr.String(), want) {
		t.Errorf("stderr %q; want %q", h.stderr.String(), want)
	}
}

// flocked reports whether /proc/locks lists a flock on path's inode.
func flocked(t *testing.T, path string) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(locks), "\n") {
		if strings.Contains(line, "FLOCK") && strings.Contains(line, fmt.Sprintf(":%d ", st.Ino)) {
			return true
		}
	}
	return false
}
