package housekeeping

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podgone"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/volumes/subpath"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// TestHousekeepingUnmountsSubPathsBeforeRemoving: an orphaned pod
// directory holding the subPath bind of a hostPath is removed through the
// volume manager's TearDown, which unmounts the bind first: the host's
// files survive the removal.
func TestHousekeepingUnmountsSubPathsBeforeRemoving(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("subPath binds are real mounts: run as root")
	}
	_, ctx := ktesting.NewTestContext(t)
	pods, logs, host := t.TempDir(), t.TempDir(), t.TempDir()
	precious := filepath.Join(host, "sub", "precious")
	must(t, os.MkdirAll(filepath.Dir(precious), 0o755))
	must(t, os.WriteFile(precious, []byte("host"), 0o644))
	binder := subpath.New(subpath.Config{})
	podDir := filepath.Join(pods, "gone")
	_, err := binder.Bind(ctx, subpath.Request{PodDir: podDir, Volume: "host", VolumeDir: host, SubPath: "sub", Container: "c"})
	must(t, err)
	t.Cleanup(func() { _ = binder.CleanPod(ctx, podDir) })
	vols, err := volume.New(volume.Config{PodsDir: pods, SubPaths: binder, Clock: clock.RealClock{}})
	must(t, err)
	h := mustNew(t, Config{
		Workers: &keeperWorkers{known: map[types.UID]podworker.KnownState{}}, Runtime: keeperRuntime{},
		SourcesReady: func() bool { return true }, PodsDir: pods, PodLogsDir: logs,
		TearDown: vols.TearDown, Gone: podgone.New(), Desired: desire(),
	})
	h.Run(ctx)
	if _, err := os.Stat(podDir); !os.IsNotExist(err) {
		t.Errorf("orphaned pod directory after housekeeping: %v", err)
	}
	if got, err := os.ReadFile(precious); err != nil || string(got) != "host" {
		t.Errorf("host file after housekeeping = %q, %v; removing the pod directory went through the bind", got, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
