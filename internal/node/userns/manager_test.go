package userns

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/platform/cri"
)

const size = 65536

var supported = []cri.RuntimeHandler{{Name: "", UserNamespaces: true}}

func testPod(uid types.UID, hostUsers *bool) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Name: string(uid)}, Spec: corev1.PodSpec{HostUsers: hostUsers}}
}

// newManager returns a Manager over podsDir with slots at 2, 3 and 4 ×
// 65536, picking the first free slot.
func newManager(t *testing.T, podsDir string, handlers []cri.RuntimeHandler) (*Manager, error) {
	t.Helper()
	return New(context.Background(), Config{
		PodsDir: podsDir, MaxPods: 3, Range: Range{First: 2 * size, Length: 3 * size},
		Handlers: func() []cri.RuntimeHandler { return handlers }, Pick: first,
	})
}

func mkPodDirs(t *testing.T, podsDir string, uids ...types.UID) {
	t.Helper()
	for _, uid := range uids {
		if err := os.MkdirAll(filepath.Join(podsDir, string(uid)), 0o750); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPodMapping(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handlers []cri.RuntimeHandler
		handler  string
		pod      *corev1.Pod
		want     *Mapping
		wantErr  string
	}{
		{name: "hostUsers unset: the host's", handlers: supported, pod: testPod("a", nil)},
		{name: "hostUsers true: the host's", handlers: supported, pod: testPod("a", ptr.To(true))},
		{name: "hostUsers false", handlers: supported, pod: testPod("a", ptr.To(false)), want: &Mapping{2 * size, size}},
		{name: "runtime reports no handlers (containerd 1.6)", pod: testPod("a", ptr.To(false)),
			wantErr: "can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
		{name: "handler without support", handlers: []cri.RuntimeHandler{{Name: ""}}, pod: testPod("a", ptr.To(false)),
			wantErr: "can't set `spec.hostUsers: false`, runtime does not support user namespaces"},
		{name: "runtimeClass handler without support", handlers: []cri.RuntimeHandler{{Name: "", UserNamespaces: true}, {Name: "kata"}}, handler: "kata",
			pod: testPod("a", ptr.To(false)), wantErr: "can't set `spec.hostUsers: false`, RuntimeClass handler \"kata\" does not support user namespaces"},
		{name: "unknown handler", handlers: supported, handler: "gvisor", pod: testPod("a", ptr.To(false)),
			wantErr: "can't set `spec.hostUsers: false`, RuntimeClass handler \"gvisor\" does not support user namespaces: the handler \"gvisor\" is not known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkPodDirs(t, dir, tc.pod.UID)
			m, err := newManager(t, dir, tc.handlers)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.PodMapping(context.Background(), tc.pod, tc.handler)
			if errText(err) != tc.wantErr {
				t.Errorf("error %q, want %q", errText(err), tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
			_, statErr := os.Stat(filepath.Join(dir, string(tc.pod.UID), MappingsFile))
			if hasFile := statErr == nil; hasFile != (tc.want != nil) {
				t.Errorf("mappings file present: %v, want %v", hasFile, tc.want != nil)
			}
		})
	}
}

// TestMappingsSurviveARestart: a pod keeps its IDs across a new Manager
// (a restarted berth), which also never hands them to another pod; a
// released pod's file is gone and its IDs are free.
func TestMappingsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mkPodDirs(t, dir, "a", "b", "c", "plain")
	m, err := newManager(t, dir, supported)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []types.UID{"a", "b"} {
		if _, err := m.PodMapping(ctx, testPod(uid, ptr.To(false)), ""); err != nil {
			t.Fatal(err)
		}
	}
	content, err := os.ReadFile(filepath.Join(dir, "b", MappingsFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := string(Encode(Mapping{3 * size, size})); string(content) != want {
		t.Errorf("b's file %s, want %s", content, want)
	}

	restarted, err := newManager(t, dir, supported)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.UID{"a", "b"}, restarted.HeldPods()); diff != "" {
		t.Errorf("rebuilt allocations (-want +got):\n%s", diff)
	}
	got, err := restarted.PodMapping(ctx, testPod("b", ptr.To(false)), "")
	if err != nil || *got != (Mapping{3 * size, size}) {
		t.Errorf("b after restart: %+v, %v; want its old mapping", got, err)
	}
	got, err = restarted.PodMapping(ctx, testPod("c", ptr.To(false)), "")
	if err != nil || *got != (Mapping{4 * size, size}) {
		t.Errorf("c after restart: %+v, %v; want the free slot", got, err)
	}

	restarted.Release(ctx, "a")
	if _, err := os.Stat(filepath.Join(dir, "a", MappingsFile)); !os.IsNotExist(err) {
		t.Errorf("a's mappings file after release: %v", err)
	}
	restarted.Forget(ctx, "c") // gone (podgone)
	restarted.Forget(ctx, "c") // idempotent
	if diff := cmp.Diff([]types.UID{"b"}, restarted.HeldPods()); diff != "" {
		t.Errorf("allocations after release and forget (-want +got):\n%s", diff)
	}
	mkPodDirs(t, dir, "d")
	got, err = restarted.PodMapping(ctx, testPod("d", ptr.To(false)), "")
	if err != nil || *got != (Mapping{2 * size, size}) {
		t.Errorf("d: %+v, %v; want a's released slot", got, err)
	}
}

func TestNewRefusesConflictingFiles(t *testing.T) {
	dir := t.TempDir()
	mkPodDirs(t, dir, "a", "b")
	for _, uid := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, uid, MappingsFile), Encode(Mapping{2 * size, size}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := newManager(t, dir, supported)
	if want := `record pod mappings for existing pod "b": range picked for pod "b" already taken`; errText(err) != want {
		t.Errorf("error %q, want %q", errText(err), want)
	}
}

// TestNeverFollowsSymlinks: a mappings file or pod directory that is a
// symlink (a pod may write under its directory) is neither read nor
// written through.
func TestNeverFollowsSymlinks(t *testing.T) {
	ctx := context.Background()
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "target")
	if err := os.WriteFile(target, Encode(Mapping{3 * size, size}), 0o600); err != nil {
		t.Fatal(err)
	}
	mkPodDirs(t, dir, "a")
	if err := os.Symlink(target, filepath.Join(dir, "a", MappingsFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := newManager(t, dir, supported); err == nil {
		t.Error("New read a mappings file through a symlink")
	}
	if err := os.Remove(filepath.Join(dir, "a", MappingsFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	m, err := newManager(t, dir, supported)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.PodMapping(ctx, testPod("b", ptr.To(false)), ""); err == nil {
		t.Error("PodMapping wrote through a symlinked pod directory")
	}
	if _, err := os.Stat(filepath.Join(elsewhere, MappingsFile)); !os.IsNotExist(err) {
		t.Errorf("a mappings file was written outside the pods directory: %v", err)
	}
	if len(m.HeldPods()) != 0 {
		t.Errorf("a failed allocation was kept: %v", m.HeldPods())
	}
	if _, err := m.PodMapping(ctx, testPod("../x", ptr.To(false)), ""); errText(err) != `invalid pod UID "../x": not a single path element` {
		t.Errorf("a UID with a slash: %v", err)
	}
}
