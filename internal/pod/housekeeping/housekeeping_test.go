package housekeeping

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

type keeperWorkers struct {
	known   map[types.UID]podworker.KnownState
	updates []string
}

func (w *keeperWorkers) SyncKnownPods([]*corev1.Pod) map[types.UID]podworker.KnownState {
	return w.known
}
func (w *keeperWorkers) Update(_ context.Context, o podworker.UpdateOptions) {
	uid := types.UID("")
	if o.Pod != nil {
		uid = o.Pod.UID
	} else if o.RuntimePod != nil {
		uid = o.RuntimePod.UID
	}
	w.updates = append(w.updates, o.Type.String()+" "+string(uid))
}

type keeperRuntime map[types.UID]*runtimestate.Pod

func (r keeperRuntime) ListPods(context.Context) (map[types.UID]*runtimestate.Pod, error) {
	return r, nil
}

type forgetter struct{ uids []string }

func (f *forgetter) Forget(_ context.Context, uid types.UID) {
	f.uids = append(f.uids, "status "+string(uid))
}

// cgroupCleaner records what housekeeping asks of the container manager:
// the active pods and the gone verdict of every UID it asks about.
type cgroupCleaner struct {
	active []types.UID
	gone   map[types.UID]bool
}

func (c *cgroupCleaner) Cleanup(_ context.Context, active []*corev1.Pod, gone func(types.UID) bool) error {
	for _, p := range active {
		c.active = append(c.active, p.UID)
	}
	c.gone = map[types.UID]bool{}
	for _, uid := range []types.UID{"desired", "worker", "running", "gone"} {
		c.gone[uid] = gone(uid)
	}
	return nil
}

// usernsCleaner records the gone verdicts housekeeping gives the user
// namespace manager.
type usernsCleaner struct{ gone map[types.UID]bool }

func (u *usernsCleaner) Cleanup(_ context.Context, gone func(types.UID) bool) {
	u.gone = map[types.UID]bool{}
	for _, uid := range []types.UID{"desired", "worker", "running", "gone"} {
		u.gone[uid] = gone(uid)
	}
}

func TestHousekeeping(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pods, logs := t.TempDir(), t.TempDir()
	for _, d := range []string{
		filepath.Join(pods, "desired"), filepath.Join(pods, "worker"), filepath.Join(pods, "running"), filepath.Join(pods, "gone"),
		filepath.Join(logs, "default_a_desired"), filepath.Join(logs, "default_b_gone"),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	workers := &keeperWorkers{known: map[types.UID]podworker.KnownState{"worker": {}}}
	runtime := keeperRuntime{"running": {UID: "running"}, "orphan": {UID: "orphan"}}
	var calls forgetter
	cgroups := &cgroupCleaner{}
	users, allocs := &usernsCleaner{}, &usernsCleaner{}
	h := mustNew(t, Config{
		Workers: workers, Runtime: runtime, SourcesReady: func() bool { return true },
		PodsDir: pods, PodLogsDir: logs, Statuses: &calls,
		TearDown: func(_ context.Context, uid types.UID) error {
			calls.uids = append(calls.uids, "teardown "+string(uid))
			return nil
		},
		Cgroups:        cgroups,
		UserNamespaces: users,
		Allocations:    allocs,
	})
	desired := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "desired"}}}
	h.Run(ctx, desired)

	// Pod cgroups: the desired pods are active; only a pod no source,
	// worker or runtime has is gone.
	if diff := cmp.Diff([]types.UID{"desired"}, cgroups.active); diff != "" {
		t.Errorf("active pods for cgroups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[types.UID]bool{"desired": false, "worker": false, "running": false, "gone": true}, cgroups.gone); diff != "" {
		t.Errorf("gone verdicts for cgroups (-want +got):\n%s", diff)
	}

	// User namespaces and allocations: the same verdicts.
	if diff := cmp.Diff(map[types.UID]bool{"desired": false, "worker": false, "running": false, "gone": true}, users.gone); diff != "" {
		t.Errorf("gone verdicts for user namespaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(users.gone, allocs.gone); diff != "" {
		t.Errorf("gone verdicts for allocations (-want +got):\n%s", diff)
	}

	// A desired pod without a worker gets one; a runtime pod nobody owns
	// is killed; "running" is in the runtime but not desired: killed too.
	if diff := cmp.Diff([]string{"create desired", "kill orphan", "kill running"}, sorted(workers.updates)); diff != "" {
		t.Errorf("worker updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"teardown gone", "status gone"}, calls.uids); diff != "" {
		t.Errorf("cleanup calls (-want +got):\n%s", diff)
	}
	for path, want := range map[string]bool{
		filepath.Join(pods, "desired"): true, filepath.Join(pods, "worker"): true, filepath.Join(pods, "running"): true,
		filepath.Join(pods, "gone"): false, filepath.Join(logs, "default_a_desired"): true, filepath.Join(logs, "default_b_gone"): false,
	} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", path, err == nil, want)
		}
	}
}

// TestHousekeepingRemovesOnlyListedDirectories: housekeeping removes real
// directories whose names are valid UIDs, nothing else: a symlink in the
// pods directory (named like a pod) is neither followed nor torn down, and
// a directory whose name is no valid UID is left alone.
func TestHousekeepingRemovesOnlyListedDirectories(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pods, logs, outside := t.TempDir(), t.TempDir(), t.TempDir()
	precious := filepath.Join(outside, "volumes", "kubernetes.io~empty-dir", "data", "precious")
	for _, d := range []string{
		filepath.Join(pods, "gone"), filepath.Join(pods, "bad_uid"), filepath.Join(pods, "trailing-"),
		filepath.Join(logs, "default_a_bad uid"), filepath.Dir(precious),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(pods, "linked"), filepath.Join(logs, "default_b_linked")} {
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
	}
	var calls forgetter
	h := mustNew(t, Config{
		Workers: &keeperWorkers{}, Runtime: keeperRuntime{}, SourcesReady: func() bool { return true },
		PodsDir: pods, PodLogsDir: logs, Statuses: &calls,
		TearDown: func(_ context.Context, uid types.UID) error {
			calls.uids = append(calls.uids, "teardown "+string(uid))
			return nil
		},
	})
	h.Run(ctx, nil)

	if diff := cmp.Diff([]string{"teardown gone", "status gone"}, calls.uids); diff != "" {
		t.Errorf("cleanup calls (-want +got):\n%s", diff)
	}
	for path, want := range map[string]bool{
		filepath.Join(pods, "gone"): false, filepath.Join(pods, "bad_uid"): true, filepath.Join(pods, "trailing-"): true,
		filepath.Join(pods, "linked"): true, filepath.Join(logs, "default_b_linked"): true,
		filepath.Join(logs, "default_a_bad uid"): true, precious: true,
	} {
		if _, err := os.Lstat(path); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", path, err == nil, want)
		}
	}
}

func TestHousekeepingWaitsForSources(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	workers := &keeperWorkers{}
	h := mustNew(t, Config{Workers: workers, Runtime: keeperRuntime{"x": {UID: "x"}}, SourcesReady: func() bool { return false },
		PodsDir: t.TempDir(), PodLogsDir: t.TempDir(), Statuses: &forgetter{},
		TearDown: func(context.Context, types.UID) error { return nil }})
	h.Run(ctx, nil)
	if len(workers.updates) != 0 {
		t.Errorf("housekeeping acted before every source was seen: %v", workers.updates)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func mustNew(t *testing.T, cfg Config) *Housekeeper {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
