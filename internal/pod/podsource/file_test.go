package podsource

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const testPeriod = 20 * time.Second

func manifest(name, image string) string {
	return strings.NewReplacer("name: web", "name: "+name, "nginx:1.27", image).Replace(podYAML)
}

// writeFile writes through a hidden temporary file and a rename, so the
// source never sees a half-written manifest (and hidden files get exercised).
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

type sourceHarness struct {
	out   chan Snapshot
	clock *clocktesting.FakeClock
	logs  ktesting.Buffer
}

// runSource starts run in the background with a buffered test logger; the
// source stops when the test ends.
func runSource(t *testing.T, run func(ctx context.Context, out chan<- Snapshot) error, clk *clocktesting.FakeClock) *sourceHarness {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(4)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	h := &sourceHarness{out: make(chan Snapshot), clock: clk, logs: logger.GetSink().(ktesting.Underlier).GetBuffer()}
	done := make(chan error)
	go func() { done <- run(ctx, h.out) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return h
}

func startFileSource(t *testing.T, path string) *sourceHarness {
	t.Helper()
	clk := clocktesting.NewFakeClock(testNow)
	s, err := NewFileSource(FileConfig{Path: path, NodeName: "node1", Period: testPeriod, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return runSource(t, s.Run, clk)
}

// next waits for the next snapshot.
func (h *sourceHarness) next(t *testing.T) Snapshot {
	t.Helper()
	select {
	case s := <-h.out:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("no snapshot arrived")
		return Snapshot{}
	}
}

// waitNames reads snapshots until one holds exactly the named pods.
func (h *sourceHarness) waitNames(t *testing.T, want ...string) map[string]types.UID {
	t.Helper()
	deadline := time.After(waitTimeout)
	var last []string
	for {
		select {
		case s := <-h.out:
			uids := map[string]types.UID{}
			last = nil
			for _, p := range s.Pods {
				uids[p.Name] = p.UID
				last = append(last, p.Name)
			}
			sort.Strings(last)
			if strings.Join(want, ",") == strings.Join(last, ",") {
				return uids
			}
		case <-deadline:
			t.Fatalf("no snapshot with pods %v; last had %v", want, last)
			return nil
		}
	}
}

// waitPod reads snapshots until one has the named pod and ok accepts it.
func (h *sourceHarness) waitPod(t *testing.T, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case s := <-h.out:
			for _, p := range s.Pods {
				if p.Name == name && ok(p) {
					return p
				}
			}
		case <-deadline:
			t.Fatalf("no snapshot with the wanted pod %s", name)
			return nil
		}
	}
}

// errorsAbout counts the logged errors whose error names file.
func (h *sourceHarness) errorsAbout(file string) int {
	n := 0
	for _, e := range h.logs.Data() {
		if e.Type == ktesting.LogError && e.Err != nil && strings.Contains(e.Err.Error(), file) {
			n++
		}
	}
	return n
}

func TestFileSourceFollowsDirectory(t *testing.T) {
	dir := t.TempDir()
	h := startFileSource(t, dir)
	if s := h.next(t); s.Source != podutil.FileSource || len(s.Pods) != 0 {
		t.Fatalf("first snapshot = %+v, want an empty file snapshot", s)
	}

	writeFile(t, filepath.Join(dir, "a.yaml"), manifest("a", "nginx:1"))
	uids := h.waitNames(t, "a-node1")
	writeFile(t, filepath.Join(dir, "b.json"), podJSON)
	uids2 := h.waitNames(t, "a-node1", "web-node1")
	if uids2["a-node1"] != uids["a-node1"] {
		t.Error("an unrelated file changed pod a's UID")
	}

	// A hidden file never becomes a pod.
	writeFile(t, filepath.Join(dir, ".hidden.yaml"), manifest("hidden", "x:1"))
	writeFile(t, filepath.Join(dir, "c.yaml"), manifest("c", "nginx:1"))
	uids2 = h.waitNames(t, "a-node1", "c-node1", "web-node1")

	// New content is a new pod: new UID.
	writeFile(t, filepath.Join(dir, "a.yaml"), manifest("a", "nginx:2"))
	h.waitPod(t, "a-node1", func(p *corev1.Pod) bool { return p.UID != uids["a-node1"] })

	// A rename is a new pod too (the path is part of the UID), as upstream.
	if err := os.Rename(filepath.Join(dir, "c.yaml"), filepath.Join(dir, "d.yaml")); err != nil {
		t.Fatal(err)
	}
	oldC := uids2["c-node1"]
	h.waitPod(t, "c-node1", func(p *corev1.Pod) bool { return p.UID != oldC })

	if err := os.Remove(filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	h.waitNames(t, "a-node1", "c-node1")
}

func TestFileSourceSkipsBrokenFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), manifest("good", "nginx:1"))
	writeFile(t, filepath.Join(dir, "broken.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {containers: []}\n")
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	h := startFileSource(t, dir)
	h.waitNames(t, "good-node1")
	if n := h.errorsAbout("broken.yaml"); n != 1 {
		t.Errorf("errors about broken.yaml = %d, want 1:\n%s", n, h.logs.String())
	}
	if !strings.Contains(h.logs.String(), "spec.containers") {
		t.Errorf("the error does not give the reason:\n%s", h.logs.String())
	}

	// Re-lists (a tick, then an event) do not log the same error again.
	h.clock.Step(testPeriod)
	writeFile(t, filepath.Join(dir, "other.yaml"), manifest("other", "nginx:1"))
	h.waitNames(t, "good-node1", "other-node1")
	if n := h.errorsAbout("broken.yaml"); n != 1 {
		t.Errorf("errors about broken.yaml after re-lists = %d, want 1", n)
	}
	if n := h.errorsAbout("subdir"); n != 1 {
		t.Errorf("errors about subdir = %d, want 1", n)
	}

	writeFile(t, filepath.Join(dir, "broken.yaml"), manifest("broken", "nginx:1"))
	h.waitNames(t, "broken-node1", "good-node1", "other-node1")
}

func TestFileSourceMissingDirectoryIsRetried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	h := startFileSource(t, dir)
	if s := h.next(t); len(s.Pods) != 0 {
		t.Fatalf("first snapshot has %d pods, want none", len(s.Pods))
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), manifest("a", "nginx:1"))
	// Nothing watches the new directory yet: the periodic re-list finds it.
	h.clock.Step(testPeriod)
	h.waitNames(t, "a-node1")
	// ...and watches it from then on.
	writeFile(t, filepath.Join(dir, "b.yaml"), manifest("b", "nginx:1"))
	h.waitNames(t, "a-node1", "b-node1")
}

func TestFileSourceSingleFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pod.yaml")
	writeFile(t, path, manifest("a", "nginx:1"))
	writeFile(t, filepath.Join(dir, "ignored.yaml"), manifest("ignored", "nginx:1"))
	h := startFileSource(t, path)
	uids := h.waitNames(t, "a-node1")
	writeFile(t, path, manifest("a", "nginx:2"))
	pod := h.waitPod(t, "a-node1", func(p *corev1.Pod) bool { return p.UID != uids["a-node1"] })
	if got := pod.Spec.Containers[0].Image; got != "nginx:2" {
		t.Errorf("image = %q, want nginx:2", got)
	}
}

func TestNewFileSourceValidates(t *testing.T) {
	if _, err := NewFileSource(FileConfig{Path: "/x"}); err == nil {
		t.Error("want an error without node name and clock")
	}
}

// TestFileSourceThroughMerger: a renamed manifest reaches berth as the old
// pod removed and a new one added, as upstream.
func TestFileSourceThroughMerger(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), manifest("a", "nginx:1"))
	m := startMerger(t, podutil.FileSource)
	s, err := NewFileSource(FileConfig{Path: dir, NodeName: "node1", Period: testPeriod, Clock: clocktesting.NewFakeClock(testNow)})
	if err != nil {
		t.Fatal(err)
	}
	runSource(t, func(ctx context.Context, _ chan<- Snapshot) error { return s.Run(ctx, m.Snapshots()) }, nil)
	first := recvUpdate(t, m.Updates())
	if diff := cmp.Diff([]string{"ADD:a-node1"}, summarize([]Update{first})); diff != "" {
		t.Fatalf("first update (-want +got):\n%s", diff)
	}
	if !m.SourcesReady() {
		t.Error("file source sent a snapshot but the merger is not ready")
	}
	if err := os.Rename(filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		got = append(got, summarize([]Update{recvUpdate(t, m.Updates())})...)
	}
	if diff := cmp.Diff([]string{"REMOVE:a-node1", "ADD:a-node1"}, got); diff != "" {
		t.Errorf("rename updates (-want +got):\n%s", diff)
	}
}

// TestFileSourceRefusesBadUID: a manifest whose metadata.uid would climb
// out of the pods directory is refused with an error naming its file; the
// manifest next to it runs.
func TestFileSourceRefusesBadUID(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), manifest("good", "nginx:1"))
	evil := strings.Replace(manifest("evil", "nginx:1"), "  name: evil\n", "  name: evil\n  uid: ../../x\n", 1)
	if evil == manifest("evil", "nginx:1") {
		t.Fatal("test manifest has no uid")
	}
	writeFile(t, filepath.Join(dir, "evil.yaml"), evil)
	h := startFileSource(t, dir)
	h.waitNames(t, "good-node1")
	if n := h.errorsAbout("evil.yaml"); n != 1 {
		t.Errorf("errors about evil.yaml = %d, want 1:\n%s", n, h.logs.String())
	}
	if !strings.Contains(h.logs.String(), "metadata.uid") {
		t.Errorf("the error does not name the field:\n%s", h.logs.String())
	}
}

// TestFileSourceRefusesOversizedManifest: a manifest file larger than the
// bound is refused with an error naming it, without being read whole; the
// good pod next to it runs.
func TestFileSourceRefusesOversizedManifest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), manifest("good", "nginx:1"))
	huge := manifest("huge", "nginx:1") + "# " + strings.Repeat("x", maxManifestBytes) + "\n"
	writeFile(t, filepath.Join(dir, "huge.yaml"), huge)
	h := startFileSource(t, dir)
	h.waitNames(t, "good-node1")
	if n := h.errorsAbout("huge.yaml"); n != 1 {
		t.Errorf("errors about huge.yaml = %d, want 1:\n%s", n, h.logs.String())
	}
	if !strings.Contains(h.logs.String(), "larger than") {
		t.Errorf("the error does not say the file is too large:\n%s", h.logs.String())
	}
}
