package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

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
	verbosity      int
}

func (h *harness) run(ctx context.Context, files fstest.MapFS, args ...string) int {
	trim := func(name string) string { return strings.TrimPrefix(name, "/") }
	h.verbosity = -1
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
		setVerbosity: func(v int) error { h.verbosity = v; return nil },
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
		"bad.yaml":  {Data: []byte(header + "evictionHard: {memory.available: 1Gi}\nserializeImagePulls: false\n")},
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
			`kubeletConfiguration field "evictionHard": not supported by berth yet (only the default is accepted)`,
			`kubeletConfiguration field "serializeImagePulls": not supported by berth yet`,
		}},
		{"unknown field", []string{"--config=/typo.yaml"}, []string{`unknown field "staticPodDir"`}},
		{"missing file", []string{"--config=/nope.yaml"}, []string{`read config file "/nope.yaml"`}},
		{"missing kubeconfig", []string{"--config=/good.yaml", "--kubeconfig=/k"}, []string{`flag --kubeconfig: read "/k"`}},
		{"bootstrap kubeconfig", []string{"--config=/good.yaml", "--bootstrap-kubeconfig=/b"}, []string{"flag --bootstrap-kubeconfig: TLS bootstrap is not supported yet"}},
		{"unsupported field by flag", []string{"--config=/good.yaml", "--serialize-image-pulls=false"}, []string{
			`flag --serialize-image-pulls sets kubeletConfiguration field "serializeImagePulls": not supported by berth yet`,
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
	if code := h.run(context.Background(), files, "--config=/c.yaml", "-v", "4"); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, h.stderr.String())
	}
	if h.agentCfg == nil {
		t.Fatal("agent not started")
	}
	if h.agentCfg.NodeName != "host-a" || h.agentCfg.Kubelet.StaticPodPath != "/etc/m" {
		t.Errorf("agent got NodeName %q, staticPodPath %q", h.agentCfg.NodeName, h.agentCfg.Kubelet.StaticPodPath)
	}
	if h.verbosity != 4 || h.agentCfg.Verbosity != 4 {
		t.Errorf("verbosity applied %d, config %d; want 4 from -v over the file's 2", h.verbosity, h.agentCfg.Verbosity)
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
