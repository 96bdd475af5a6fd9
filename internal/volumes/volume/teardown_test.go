package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/volumes/subpath"
)

type failingCleaner struct{ calls []string }

func (f *failingCleaner) CleanPod(_ context.Context, podDir string) error {
	f.calls = append(f.calls, podDir)
	return errors.New("unmount subPath bind: device or resource busy")
}

// TestTearDownStopsWhenSubPathsStayMounted: a subPath bind that cannot be
// unmounted fails TearDown before anything is removed, so the caller keeps
// the pod directory.
func TestTearDownStopsWhenSubPathsStayMounted(t *testing.T) {
	e := newEnv(t)
	cleaner := &failingCleaner{}
	e.m.cfg.SubPaths = cleaner
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	ctx := context.Background()
	paths, err := e.m.SetUp(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.TearDown(ctx, pod.UID); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("TearDown() = %v, want the clean's error", err)
	}
	if want := filepath.Join(e.dir, "uid-1"); len(cleaner.calls) != 1 || cleaner.calls[0] != want {
		t.Errorf("CleanPod calls = %q, want [%q]", cleaner.calls, want)
	}
	if _, err := os.Stat(paths["cache"]); err != nil {
		t.Errorf("TearDown removed a volume although a bind stayed mounted: %v", err)
	}
}

// TestTearDownUnmountsHostPathSubPath: the bind of a hostPath subPath is
// gone after TearDown and the host's files are untouched, so removing the
// pod directory cannot reach them.
func TestTearDownUnmountsHostPathSubPath(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("subPath binds are real mounts: run as root")
	}
	e := newEnv(t)
	hostDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(hostDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "sub", "precious"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	binder := subpath.New(subpath.Config{})
	e.m.cfg.SubPaths = binder
	ctx := context.Background()
	podDir := filepath.Join(e.dir, "uid-1")
	target, err := binder.Bind(ctx, subpath.Request{PodDir: podDir, Volume: "host", VolumeDir: hostDir, SubPath: "sub", Container: "c"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = binder.CleanPod(ctx, podDir) })
	if err := e.m.TearDown(ctx, "uid-1"); err != nil {
		t.Fatalf("TearDown() = %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("subPath bind %q after TearDown: %v", target, err)
	}
	if err := os.RemoveAll(podDir); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(hostDir, "sub", "precious")); got != "host" {
		t.Errorf("host file after TearDown and pod directory removal = %q", got)
	}
}
