package housekeeping

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podgone"
	"github.com/berthk8s/berth/internal/pod/podstatus"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

type keeperWorkers struct {
	known   map[types.UID]podworker.KnownState
	updates []string
}

func (w *keeperWorkers) SyncKnownPods(context.Context, func(types.UID) bool) map[types.UID]podworker.KnownState {
	return maps.Clone(w.known)
}
func (w *keeperWorkers) Known(uid types.UID) bool {
	_, ok := w.known[uid]
	return ok
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

// view is the sync loop's desired view (syncloop.Desired): the desired
// pods and the UIDs of the mirror pods the API source has.
type view struct {
	pods    []*corev1.Pod
	mirrors []types.UID
}

func (v *view) Pods() []*corev1.Pod { return v.pods }
func (v *view) Has(uid types.UID) bool {
	return slices.ContainsFunc(v.pods, func(p *corev1.Pod) bool { return p.UID == uid })
}
func (v *view) MirrorPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, uid := range v.mirrors {
		out = append(out, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m-" + string(uid), UID: uid}})
	}
	return out
}

// desire returns a view of these desired pods (named after their UIDs).
func desire(uids ...types.UID) *view {
	v := &view{}
	for _, uid := range uids {
		v.pods = append(v.pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: string(uid), UID: uid}})
	}
	return v
}

// callLog records what housekeeping tears down.
type callLog struct{ uids []string }

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
	for _, uid := range []types.UID{"desired", "worker", "running", "mirror", "gone", "new"} {
		c.gone[uid] = gone(uid)
	}
	return nil
}

// holder is an owner of per-pod state (a podgone.Holder) that holds
// pods until it is told they are gone.
type holder struct {
	held   map[types.UID]bool
	forgot []types.UID
}

func newHolder(uids ...types.UID) *holder {
	h := &holder{held: map[types.UID]bool{}}
	for _, uid := range uids {
		h.held[uid] = true
	}
	return h
}

func (h *holder) Forget(_ context.Context, uid types.UID) {
	delete(h.held, uid)
	h.forgot = append(h.forgot, uid)
}

func (h *holder) HeldPods() []types.UID { return slices.Collect(maps.Keys(h.held)) }

// route returns a route with owners registered.
func route(owners map[string]podgone.Owner) *podgone.Route {
	r := podgone.New()
	for _, name := range slices.Sorted(maps.Keys(owners)) {
		r.Register(name, owners[name])
	}
	return r
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
	var calls callLog
	cgroups := &cgroupCleaner{}
	h := mustNew(t, Config{
		Workers: workers, Gone: podgone.New(), Runtime: runtime, SourcesReady: func() bool { return true },
		PodsDir: pods, PodLogsDir: logs,
		TearDown: func(_ context.Context, uid types.UID) error {
			calls.uids = append(calls.uids, "teardown "+string(uid))
			return nil
		},
		Cgroups: cgroups,
		Desired: &view{pods: desire("desired").pods, mirrors: []types.UID{"mirror"}},
	})
	h.Run(ctx)

	// Pod cgroups: the desired pods are active; only a pod no source,
	// worker or runtime has is gone.
	if diff := cmp.Diff([]types.UID{"desired"}, cgroups.active); diff != "" {
		t.Errorf("active pods for cgroups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[types.UID]bool{"desired": false, "worker": false, "running": false, "mirror": false, "gone": true, "new": true}, cgroups.gone); diff != "" {
		t.Errorf("gone verdicts for cgroups (-want +got):\n%s", diff)
	}

	// A desired pod without a worker gets one; a runtime pod nobody owns
	// is killed; "running" is in the runtime but not desired: killed too.
	if diff := cmp.Diff([]string{"create desired", "kill orphan", "kill running"}, sorted(workers.updates)); diff != "" {
		t.Errorf("worker updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"teardown gone"}, calls.uids); diff != "" {
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

// TestHousekeepingAnnouncesOrphans: a pod some owner holds state for (its
// checkpoint restored after a restart of berth) that no source, worker or
// runtime has is an orphan; the route is told of it, once, on the second
// round that finds it, so every owner forgets it. A desired pod, a pod
// with a worker, one in the runtime and a mirror pod are none.
func TestHousekeepingAnnouncesOrphans(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	users, allocs := newHolder("desired", "worker", "running", "mirror", "gone"), newHolder("gone")
	h := mustNew(t, Config{
		Workers: &keeperWorkers{known: map[types.UID]podworker.KnownState{"worker": {}}},
		Gone:    route(map[string]podgone.Owner{"users": users, "allocations": allocs}),
		Runtime: keeperRuntime{"running": {UID: "running"}},
		Desired: &view{pods: desire("desired").pods, mirrors: []types.UID{"mirror"}},
		PodsDir: t.TempDir(), PodLogsDir: t.TempDir(),
		TearDown: func(context.Context, types.UID) error { return nil }, SourcesReady: func() bool { return true },
	})
	h.Run(ctx)
	if len(users.forgot) != 0 || len(allocs.forgot) != 0 {
		t.Errorf("orphans forgotten on the first round: %v, %v", users.forgot, allocs.forgot)
	}
	h.Run(ctx)
	h.Run(ctx)
	for name, o := range map[string]*holder{"users": users, "allocations": allocs} {
		if diff := cmp.Diff([]types.UID{"gone"}, o.forgot); diff != "" {
			t.Errorf("%s forgot (-want +got):\n%s", name, diff)
		}
	}
}

// TestHousekeepingSparesStateCreatedDuringARound: state created for a pod
// while a round runs (admission records an allocation before the pod is
// desired and has a worker) is not an orphan's: by the next round the pod
// is desired.
func TestHousekeepingSparesStateCreatedDuringARound(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	allocs := newHolder("new")
	desired := desire()
	h := mustNew(t, Config{
		Workers: &keeperWorkers{}, Gone: route(map[string]podgone.Owner{"allocations": allocs}), Runtime: keeperRuntime{},
		PodsDir: t.TempDir(), PodLogsDir: t.TempDir(), Desired: desired,
		TearDown: func(context.Context, types.UID) error { return nil }, SourcesReady: func() bool { return true },
	})
	h.Run(ctx) // admitted, not yet desired
	desired.pods = desire("new").pods
	h.Run(ctx)
	desired.pods = nil
	h.Run(ctx) // gone now, but not the round before: a suspect again
	if len(allocs.forgot) != 0 {
		t.Errorf("forgot %v, a pod desired by the next round", allocs.forgot)
	}
}

// admitting is a runtime whose listing, while housekeeping waits for it,
// sees the sync loop admit a pod: the pod is published as desired and gets
// a worker, which makes its directories (volumes set up) and, when
// sandbox, its sandbox, so the listing shows that.
type admitting struct {
	desired          *view
	workers          *keeperWorkers
	pods, logs, uid  string
	sandbox          bool
	listings, admits int
}

func (r *admitting) ListPods(context.Context) (map[types.UID]*runtimestate.Pod, error) {
	r.listings++
	if r.listings == 1 {
		r.admits++
		r.desired.pods = desire(types.UID(r.uid)).pods
		r.workers.known[types.UID(r.uid)] = podworker.KnownState{Phase: podworker.Syncing, HasConfig: true}
		for _, d := range []string{filepath.Join(r.pods, r.uid, "volumes"), filepath.Join(r.logs, "default_new_"+r.uid)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
	}
	if !r.sandbox {
		return nil, nil
	}
	return map[types.UID]*runtimestate.Pod{types.UID(r.uid): {UID: types.UID(r.uid), Name: "new", Namespace: "default"}}, nil
}

// TestHousekeepingSparesAPodAdmittedDuringARound (the tmpfs emptyDir
// smoke failure): the sync loop admits pods while a housekeeping round
// runs. A pod admitted after the round began, whose directories (and
// sandbox) the round's listings then find, is not an orphan: its volumes
// are not torn down (an emptyDir's tmpfs was unmounted under its first
// container), its sandbox is not killed, its directories and cgroup stay.
func TestHousekeepingSparesAPodAdmittedDuringARound(t *testing.T) {
	for _, sandbox := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			pods, logs := t.TempDir(), t.TempDir()
			desired, workers := desire(), &keeperWorkers{known: map[types.UID]podworker.KnownState{}}
			runtime := &admitting{desired: desired, workers: workers, pods: pods, logs: logs, uid: "new", sandbox: sandbox}
			var calls callLog
			cgroups := &cgroupCleaner{}
			h := mustNew(t, Config{
				Workers: workers, Desired: desired, Gone: podgone.New(), Runtime: runtime, SourcesReady: func() bool { return true },
				PodsDir: pods, PodLogsDir: logs, Cgroups: cgroups,
				TearDown: func(_ context.Context, uid types.UID) error {
					calls.uids = append(calls.uids, "teardown "+string(uid))
					return nil
				},
			})
			h.Run(ctx)
			if runtime.admits != 1 {
				t.Fatalf("the pod was admitted %d times during the round, want 1", runtime.admits)
			}
			if len(workers.updates) != 0 {
				t.Errorf("worker updates %v for a pod admitted during the round, want none", workers.updates)
			}
			if len(calls.uids) != 0 {
				t.Errorf("cleanup calls %v for a pod admitted during the round, want none", calls.uids)
			}
			if cgroups.gone["new"] {
				t.Error("the pod's cgroup is gone's")
			}
			for _, path := range []string{filepath.Join(pods, "new"), filepath.Join(logs, "default_new_new")} {
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s removed: %v", path, err)
				}
			}
		})
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
	var calls callLog
	h := mustNew(t, Config{
		Workers: &keeperWorkers{}, Runtime: keeperRuntime{}, SourcesReady: func() bool { return true },
		PodsDir: pods, PodLogsDir: logs, Gone: podgone.New(), Desired: desire(),
		TearDown: func(_ context.Context, uid types.UID) error {
			calls.uids = append(calls.uids, "teardown "+string(uid))
			return nil
		},
	})
	h.Run(ctx)

	if diff := cmp.Diff([]string{"teardown gone"}, calls.uids); diff != "" {
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
		PodsDir: t.TempDir(), PodLogsDir: t.TempDir(), Gone: podgone.New(), Desired: desire(),
		TearDown: func(context.Context, types.UID) error { return nil }})
	h.Run(ctx)
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

// TestOrphanStatusIsForgottenThroughTheRoute (issue #23): housekeeping
// dropped the status of an orphan through the raw status store, so no
// other owner heard of it (the pod startup tracker kept the pod). The
// status store is an owner like the others: housekeeping tells the route,
// and every owner forgets the pod.
func TestOrphanStatusIsForgottenThroughTheRoute(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pods := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pods, "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := podstatus.NewStore(clock.RealClock{})
	store.Set("gone", corev1.PodStatus{Phase: corev1.PodRunning})
	tracker := newHolder() // another owner, which holds nothing housekeeping could see
	r := podgone.New()
	r.Register("statuses", store)
	r.Register("pod startup tracker", tracker)
	h := mustNew(t, Config{
		Workers: &keeperWorkers{}, Gone: r, Runtime: keeperRuntime{}, SourcesReady: func() bool { return true },
		PodsDir: pods, PodLogsDir: t.TempDir(), Desired: desire(),
		TearDown: func(context.Context, types.UID) error { return nil },
	})
	h.Run(ctx)
	h.Run(ctx)
	if _, ok := store.Get("gone"); ok {
		t.Error("the orphan's status is kept")
	}
	if diff := cmp.Diff([]types.UID{"gone"}, tracker.forgot); diff != "" {
		t.Errorf("the other owners did not hear of the status drop (-want +got):\n%s", diff)
	}
}
