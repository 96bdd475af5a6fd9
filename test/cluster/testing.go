package cluster

import (
	"context"
	"os"
	"testing"
)

// E2EEnv names the variable that turns on tests needing real components.
const E2EEnv = "BERTH_E2E"

// ForTest starts a cluster for t and stops it when t ends. It skips t,
// saying why, unless BERTH_E2E=1 and the binaries are built; it fails t if
// the cluster does not start. On failure the cluster's directory (logs,
// certificates, etcd data) is kept and its path logged.
func ForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if os.Getenv(E2EEnv) != "1" {
		t.Skipf("set %s=1 to run tests against a real control plane", E2EEnv)
	}
	binDir, err := ResolveBinDir(opts.BinDir)
	if err != nil {
		t.Skipf("no control plane binaries: %v", err)
	}
	if err := CheckBinaries(binDir, opts.binaries()...); err != nil {
		t.Skipf("%v", err)
	}
	opts.BinDir = binDir
	opts.KeepDir = true
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Stop()
		if t.Failed() {
			t.Logf("control plane directory kept for inspection: %s", c.Dir())
			return
		}
		if err := os.RemoveAll(c.Dir()); err != nil {
			t.Errorf("remove control plane directory: %v", err)
		}
	})
	return c
}
