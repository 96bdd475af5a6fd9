package logrotate

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

// rig is a fake runtime with one running container whose log is
// <podLogs>/default_p_uid/app/0.log on disk.
type rig struct {
	clk     *clocktesting.FakeClock
	fake    *crifake.Fake
	client  *cri.Client
	m       *Manager
	id      string
	logDir  string
	podLogs string
}

func newRig(t *testing.T, p Policy) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{clk: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)), podLogs: t.TempDir()}
	r.fake = crifake.New(r.clk)
	r.fake.AddImage("busybox:1.36")
	r.client = r.fake.Client(t)
	podDir := filepath.Join(r.podLogs, "default_p_uid")
	r.logDir = filepath.Join(podDir, "app")
	if err := os.MkdirAll(r.logDir, 0o750); err != nil {
		t.Fatal(err)
	}
	sb := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "uid", Namespace: "default"}, LogDirectory: podDir}
	s, err := r.client.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sb})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.client.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  s.GetPodSandboxId(),
		Config:        &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}, LogPath: "app/0.log"},
		SandboxConfig: sb,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.id = c.GetContainerId()
	if _, err := r.client.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: r.id}); err != nil {
		t.Fatal(err)
	}
	if r.m, err = New(Config{Runtime: r.client.Runtime, PodLogsDir: r.podLogs, Policy: p, Workers: 2, Interval: 10 * time.Second, Clock: r.clk}); err != nil {
		t.Fatal(err)
	}
	return r
}

// write appends n bytes of a line to the current log, as the runtime would.
func (r *rig) write(t *testing.T, line string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(r.logDir, "0.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}

func (r *rig) files(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(r.logDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

func readGzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRotateAll(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Policy{MaxSize: 10, MaxFiles: 3})
	r.write(t, "short\n")
	if err := r.m.RotateAll(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0.log"}, r.files(t)); diff != "" {
		t.Fatalf("under the max size (-want +got):\n%s", diff)
	}
	// Three rotations, a second apart.
	for i, line := range []string{"first line\n", "second line\n", "third line\n"} {
		r.write(t, line)
		r.clk.Step(time.Second)
		if err := r.m.RotateAll(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if diff := cmp.Diff([]string{"0.log", "0.log.20261123-100001"}, r.files(t)); diff != "" {
				t.Fatalf("after the first rotation (-want +got):\n%s", diff)
			}
		}
	}
	// MaxFiles 3: the current log (reopened empty by the runtime), the
	// newest rotated file uncompressed, one older compressed.
	want := []string{"0.log", "0.log.20261123-100002.gz", "0.log.20261123-100003"}
	if diff := cmp.Diff(want, r.files(t)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	if got := readGzip(t, filepath.Join(r.logDir, want[1])); got != "second line\n" {
		t.Errorf("compressed file holds %q, want the second line", got)
	}
	if b, _ := os.ReadFile(filepath.Join(r.logDir, want[2])); string(b) != "third line\n" {
		t.Errorf("newest rotated file holds %q", b)
	}
	if st, err := os.Stat(filepath.Join(r.logDir, "0.log")); err != nil || st.Size() != 0 {
		t.Errorf("current log: %v, size %d, want reopened empty", err, st.Size())
	}
}

func TestRotateUndoneWhenReopenFails(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Policy{MaxSize: 10, MaxFiles: 3})
	r.write(t, "a long enough line\n")
	r.fake.InjectError("ReopenContainerLog", cri.StatusError(cri.ErrUnavailable, "down"))
	if err := r.m.rotateContainer(ctx, r.id); err == nil || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("rotateContainer = %v, want a reopen error", err)
	}
	if diff := cmp.Diff([]string{"0.log"}, r.files(t)); diff != "" {
		t.Errorf("the rename is not undone (-want +got):\n%s", diff)
	}
}

func TestSymlinkedLogIsRefused(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Policy{MaxSize: 1, MaxFiles: 3})
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("do not touch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(filepath.Join(r.logDir, "0.log"))) // the runtime's
	if err := os.Symlink(outside, filepath.Join(r.logDir, "0.log")); err != nil {
		t.Fatal(err)
	}
	if err := r.m.rotateContainer(ctx, r.id); err == nil {
		t.Error("rotateContainer followed a symlinked log")
	}
	// A symlinked container directory is refused too.
	if err := os.RemoveAll(r.logDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), r.logDir); err != nil {
		t.Fatal(err)
	}
	if err := r.m.rotateContainer(ctx, r.id); err == nil {
		t.Error("rotateContainer went through a symlinked directory")
	}
	if err := r.m.Clean(ctx, r.id); err == nil {
		t.Error("Clean went through a symlinked directory")
	}
	if b, _ := os.ReadFile(outside); string(b) != "do not touch\n" {
		t.Errorf("the file outside was changed: %q", b)
	}
}

func TestClean(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, Policy{MaxSize: 10, MaxFiles: 3})
	for _, n := range []string{"0.log", "0.log.20261123-095900.gz", "0.log.20261123-095950", "1.log"} {
		if err := os.WriteFile(filepath.Join(r.logDir, n), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.m.Clean(ctx, r.id); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.log"}, r.files(t)); diff != "" {
		t.Errorf("after Clean (-want +got):\n%s", diff)
	}
	if err := r.m.Clean(ctx, "unknown"); err != nil {
		t.Errorf("Clean of an unknown container: %v", err)
	}
}

func TestRunRotatesEachInterval(t *testing.T) {
	r := newRig(t, Policy{MaxSize: 10, MaxFiles: 3})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.m.Run(ctx) }()
	r.write(t, "a long enough line\n")
	// The first round runs at once, before the write or after it; the
	// next one runs after an interval.
	deadline := time.Now().Add(10 * time.Second)
	for len(r.files(t)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no rotation: %v", r.files(t))
		}
		if r.clk.HasWaiters() {
			r.clk.Step(10 * time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
