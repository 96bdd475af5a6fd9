package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/app/simulate"
	"github.com/berthk8s/berth/internal/config"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

// runSim runs berth with args and a fake runSimulate; it returns the exit
// code, the Sim's configuration (nil when none ran) and stderr.
func runSim(t *testing.T, args ...string) (int, *simulate.Config, string) {
	t.Helper()
	var stderr bytes.Buffer
	var got *simulate.Config
	code := run(context.Background(), args, deps{
		stdout: &bytes.Buffer{}, stderr: &stderr,
		runAgent: func(context.Context, *config.Config) error { t.Error("the agent ran"); return nil },
		runSimulate: func(_ context.Context, cfg simulate.Config) error {
			got = &cfg
			return nil
		},
	})
	return code, got, stderr.String()
}

func TestSimulateFlags(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	code, cfg, stderr := runSim(t, "simulate", "--kubeconfig", kc, "--nodes", "3", "--node-name-prefix", "n-",
		"--cpu", "2", "--memory", "4Gi", "--max-pods", "20", "--node-labels", "zone=a,tier=sim",
		"--register-with-taints", "sim=true:NoSchedule", "--sandbox-latency", "2s", "--container-latency", "1s", "--pull-latency", "3s",
		"--latency", "0-1,2@StartContainer=5s", "--fail", "PullImage=0.5:DeadlineExceeded", "--control-address", "127.0.0.1:10260", "--pod-watch", "shared")
	if code != 0 || cfg == nil {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	switch {
	case cfg.Nodes != 3 || cfg.Prefix != "n-" || cfg.Kubeconfig != kc || cfg.API.Host != "https://127.0.0.1:6443":
		t.Errorf("nodes %d prefix %q kubeconfig %q host %q", cfg.Nodes, cfg.Prefix, cfg.Kubeconfig, cfg.API.Host)
	case cfg.ControlAddress != "127.0.0.1:10260" || !cfg.SharedPodWatch:
		t.Errorf("control address %q, shared pod watch %v", cfg.ControlAddress, cfg.SharedPodWatch)
	case cfg.Node.Capacity != simulate.Capacity{CPU: 2, Memory: 4 << 30, EphemeralStorage: 100 << 30, Pods: 20}:
		t.Errorf("capacity %+v", cfg.Node.Capacity)
	case cfg.Node.Labels["zone"] != "a" || cfg.Node.Labels["tier"] != "sim":
		t.Errorf("labels %v", cfg.Node.Labels)
	case len(cfg.Node.Taints) != 1 || cfg.Node.Taints[0].Key != "sim" || cfg.Node.Taints[0].Value != "true" || cfg.Node.Taints[0].Effect != corev1.TaintEffectNoSchedule:
		t.Errorf("taints %v", cfg.Node.Taints)
	case cfg.Latency != simulate.Latency{Sandbox: 2 * time.Second, Container: time.Second, Pull: 3 * time.Second}:
		t.Errorf("latency %+v", cfg.Latency)
	case len(cfg.Rules) != 2 || cfg.Rules[0].Method != "StartContainer" || len(cfg.Rules[0].Nodes) != 2 || cfg.Rules[0].Latency != 5*time.Second ||
		cfg.Rules[1].Method != "PullImage" || cfg.Rules[1].FailRate != 0.5:
		t.Errorf("rules %+v; want the --latency then the --fail", cfg.Rules)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no kubeconfig", []string{"simulate"}, "--kubeconfig is required"},
		{"bad memory", []string{"simulate", "--kubeconfig", kc, "--memory", "lots"}, "--memory"},
		{"bad taint", []string{"simulate", "--kubeconfig", kc, "--register-with-taints", "x:Sometimes"}, "--register-with-taints"},
		{"a kubelet flag", []string{"simulate", "--kubeconfig", kc, "--pod-manifest-path", "/x"}, "unknown flag"},
		{"bad pod watch", []string{"simulate", "--kubeconfig", kc, "--pod-watch", "some"}, `--pod-watch "some": want per-node or shared`},
		{"bad latency", []string{"simulate", "--kubeconfig", kc, "--latency", "RunSandbox=1s"}, `--latency "RunSandbox=1s": "RunSandbox" is not a CRI method`},
		{"bad failure", []string{"simulate", "--kubeconfig", kc, "--fail", "PullImage=2"}, "--fail failure"},
		{"missing kubeconfig file", []string{"simulate", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, "read --kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, cfg, stderr := runSim(t, tt.args...)
			if code == 0 || cfg != nil || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, ran %v, stderr %q; want a failure with %q", code, cfg != nil, stderr, tt.want)
			}
		})
	}
}
