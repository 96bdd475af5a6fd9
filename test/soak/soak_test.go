package soak

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/platform/machine"
	"github.com/berthk8s/berth/test/bench"
)

// TestSoakShort is the soak suite's short run in make test: every
// scenario once, small, on berth alone, holding it to every promise.
// `make soak` is the long run, beside the upstream kubelet.
func TestSoakShort(t *testing.T) {
	if os.Getenv("BERTH_E2E") == "" {
		t.Skip("BERTH_E2E not set: the soak needs root, containerd and the control plane")
	}
	endpoint := os.Getenv("BERTH_CRI_ENDPOINT")
	if endpoint == "" {
		endpoint = "unix:///run/containerd/containerd.sock"
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	berth := filepath.Join(dir, "berth")
	if out, err := exec.Command("go", "build", "-race", "-o", berth, "github.com/berthk8s/berth/cmd/berth").CombinedOutput(); err != nil {
		t.Fatalf("build berth: %v\n%s", err, out)
	}
	ips, err := machine.HostIPs(nil)
	if err != nil {
		t.Fatal(err)
	}
	// BERTH_SOAK_ONLY=crash,churn runs some scenarios; by default, all.
	var only []string
	if o := os.Getenv("BERTH_SOAK_ONLY"); o != "" {
		only = strings.Split(o, ",")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		// Its own device plugin directory: the host's fixed one is left
		// alone (TestDevicePlugin binds a node's over it).
		Kubelets: []bench.Kubelet{{Name: bench.ColBerth, Binary: berth, Args: []string{"--device-plugin-dir", filepath.Join(dir, "device-plugins")}}}, CRIEndpoint: endpoint, NodeIP: ips[0], WorkDir: dir, Only: only,
		Churn: Churn{Warmup: 2, Cycles: 10, Pods: 5}, Crash: Crash{Rounds: 2, Pods: 10},
		RuntimePods: 10, RestartRuntime: func(ctx context.Context) error {
			cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "hack/node-setup.sh"), "--restart-containerd")
			out, err := cmd.CombinedOutput()
			t.Logf("restart containerd: %s", out)
			return err
		},
		FaultPods: 5, FaultFor: 10 * time.Second, OutagePods: 5, Outage: 30 * time.Second, Settle: 150 * time.Second,
		Seed: time.Now().UnixNano(), Logf: t.Logf,
	})
	if rep != nil {
		t.Logf("\n%s", rep.Markdown())
		for _, s := range rep.Scenarios {
			o := rep.Outcomes[s][bench.ColBerth]
			if o.Err != nil {
				t.Errorf("%s: %v", s, o.Err)
			}
			for _, b := range o.Broken {
				t.Errorf("%s: %s", s, b)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
