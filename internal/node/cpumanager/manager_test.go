package cpumanager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/cpuset"

	"github.com/berthk8s/berth/internal/node/cpumanager/state"
)

// updates records the manager's CRI updates; fail makes them fail.
type updates struct {
	mu   sync.Mutex
	got  map[string]string
	fail bool
}

func (u *updates) update(_ context.Context, id string, cpus cpuset.CPUSet) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.fail {
		return errors.New("runtime down")
	}
	u.got[id] = cpus.String()
	return nil
}

func (u *updates) take() map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.got
	u.got = map[string]string{}
	return out
}

func newManager(t *testing.T, dir, policy string, snap *Snapshot, u *updates) (*Manager, error) {
	t.Helper()
	return New(t.Context(), Config{
		Policy: policy, Topology: topoSingleSocketHT, NumReserved: 1, StateDir: dir,
		ReconcilePeriod: 10 * time.Second, Update: u.update, Snapshot: func() Snapshot { return *snap },
		Clock: clocktesting.NewFakeClock(time.Unix(0, 0)),
	})
}

func TestNewWritesAndChecksTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	snap, u := &Snapshot{}, &updates{got: map[string]string{}}
	if _, err := newManager(t, dir, PolicyNone, snap, u); err != nil {
		t.Fatal(err)
	}
	c, found, err := state.Read(dir)
	if err != nil || !found || c.PolicyName != "none" || c.DefaultCPUSet != "" {
		t.Fatalf("checkpoint after none = %+v, %v, %v", c, found, err)
	}
	_, err = newManager(t, dir, PolicyStatic, snap, u)
	if err == nil || !strings.Contains(err.Error(), `configured policy "static" differs from state checkpoint policy "none"`) {
		t.Fatalf("New static over a none checkpoint: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, state.FileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := newManager(t, dir, PolicyStatic, snap, u); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := state.Read(dir); c.PolicyName != "static" || c.DefaultCPUSet != "0-7" {
		t.Errorf("checkpoint after static = %+v", c)
	}
	if _, err := New(t.Context(), Config{Policy: PolicyStatic, Topology: topoSingleSocketHT, StateDir: t.TempDir()}); err == nil {
		t.Errorf("static without reserved CPUs started")
	}
	if _, err := New(t.Context(), Config{Policy: "dynamic", StateDir: t.TempDir()}); err == nil {
		t.Errorf("an unknown policy started")
	}
}

func TestAdmitAllocatesAndPersists(t *testing.T) {
	dir := t.TempDir()
	snap, u := &Snapshot{SourcesReady: true}, &updates{got: map[string]string{}}
	m, err := newManager(t, dir, PolicyStatic, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gu := pod("gu", nil, container("c", "2", "2"))
	if ok, r, msg := m.Admit(ctx, gu, *snap); !ok {
		t.Fatalf("Admit = %s: %s", r, msg)
	}
	if got := m.CPUSet("gu", "c"); got != "1,5" {
		t.Errorf("CPUSet(gu) = %q, want 1,5", got)
	}
	be := pod("be", nil, corev1.Container{Name: "c"})
	if ok, _, _ := m.Admit(ctx, be, Snapshot{SourcesReady: true, Active: []*corev1.Pod{gu}}); !ok {
		t.Fatalf("BestEffort not admitted")
	}
	if got := m.CPUSet("be", "c"); got != "0,2-4,6-7" {
		t.Errorf("CPUSet(be) = %q, want the shared pool 0,2-4,6,7", got)
	}
	// Restarting restores the assignment.
	m2, err := newManager(t, dir, PolicyStatic, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	if got := m2.CPUSet("gu", "c"); got != "1,5" {
		t.Errorf("after restart CPUSet(gu) = %q", got)
	}
	// Too big: rejected with upstream's words, nothing changes.
	big := pod("big", nil, container("c", "7", "7"))
	ok, reason, msg := m2.Admit(ctx, big, Snapshot{SourcesReady: true, Active: []*corev1.Pod{gu}})
	if ok || reason != "UnexpectedAdmissionError" || msg != "Allocate failed due to not enough cpus available to satisfy request: requested=7, available=5, which is unexpected" {
		t.Errorf("Admit(big) = %v %q %q", ok, reason, msg)
	}
	// gu is no longer active: admitting another pod releases its CPUs.
	if ok, _, _ := m2.Admit(ctx, be, Snapshot{SourcesReady: true}); !ok {
		t.Fatal("not admitted")
	}
	if got := m2.State(); !got.Default.Equals(mustParse(t, "0-7")) || len(got.Assignments) != 0 {
		t.Errorf("state after gu went = %+v", got)
	}
}

// TestForgetReleasesAndPersists: a pod that is gone gives its CPUs back
// to the shared pool, in the checkpoint too; another pod keeps its own.
func TestForgetReleasesAndPersists(t *testing.T) {
	dir := t.TempDir()
	snap, u := &Snapshot{SourcesReady: true}, &updates{got: map[string]string{}}
	m, err := newManager(t, dir, PolicyStatic, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gu, other := pod("gu", nil, container("c", "2", "2")), pod("other", nil, container("c", "2", "2"))
	for _, p := range []*corev1.Pod{gu, other} {
		if ok, r, msg := m.Admit(ctx, p, Snapshot{SourcesReady: true, Active: []*corev1.Pod{gu}}); !ok {
			t.Fatalf("Admit(%s) = %s: %s", p.Name, r, msg)
		}
	}
	m.Forget(ctx, "gu")
	m.Forget(ctx, "gu") // idempotent
	c, _, err := state.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := state.Checkpoint{PolicyName: "static", DefaultCPUSet: "0-1,3-5,7", Entries: map[string]map[string]string{"other": {"c": "2,6"}}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("checkpoint after Forget(gu) (-want +got):\n%s", diff)
	}
}

func TestNoneAdmitsAndPinsNothing(t *testing.T) {
	snap, u := &Snapshot{}, &updates{got: map[string]string{}}
	m, err := newManager(t, t.TempDir(), PolicyNone, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := m.Admit(context.Background(), pod("gu", nil, container("c", "8", "8")), *snap); !ok {
		t.Errorf("none rejected a pod")
	}
	if got := m.CPUSet("gu", "c"); got != "" {
		t.Errorf("none pins %q", got)
	}
}

func TestReconcile(t *testing.T) {
	snap, u := &Snapshot{SourcesReady: true}, &updates{got: map[string]string{}}
	m, err := newManager(t, t.TempDir(), PolicyStatic, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gu, be := pod("gu", nil, container("c", "2", "2")), pod("be", nil, corev1.Container{Name: "c"})
	*snap = Snapshot{SourcesReady: true, Active: []*corev1.Pod{gu, be}, Running: map[string]map[string]string{"be": {"c": "id-be"}}}
	m.Reconcile(ctx)
	if d := cmp.Diff(map[string]string{"id-be": "0-7"}, u.take()); d != "" {
		t.Errorf("first round (-want +got):\n%s", d)
	}
	m.Reconcile(ctx)
	if got := u.take(); len(got) != 0 {
		t.Errorf("second round updated %v, want nothing", got)
	}
	// gu is admitted and runs: the shared pool shrinks for be.
	if ok, _, _ := m.Admit(ctx, gu, *snap); !ok {
		t.Fatal("gu not admitted")
	}
	snap.Running["gu"] = map[string]string{"c": "id-gu"}
	m.Reconcile(ctx)
	if d := cmp.Diff(map[string]string{"id-be": "0,2-4,6-7", "id-gu": "1,5"}, u.take()); d != "" {
		t.Errorf("after gu (-want +got):\n%s", d)
	}
	// A failed update is retried.
	u.fail = true
	*snap = Snapshot{SourcesReady: true, Active: []*corev1.Pod{be}, Running: map[string]map[string]string{"be": {"c": "id-be"}}}
	m.Reconcile(ctx)
	u.fail = false
	m.Reconcile(ctx)
	if d := cmp.Diff(map[string]string{"id-be": "0-7"}, u.take()); d != "" {
		t.Errorf("after gu went (-want +got):\n%s", d)
	}
	if _, ok := m.sentCopy()["id-gu"]; ok {
		t.Errorf("a container gone is still remembered")
	}
}

func TestRunTicks(t *testing.T) {
	snap, u := &Snapshot{SourcesReady: true}, &updates{got: map[string]string{}}
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	m, err := New(t.Context(), Config{Policy: PolicyStatic, Topology: topoSingleSocketHT, NumReserved: 1, StateDir: t.TempDir(),
		ReconcilePeriod: 10 * time.Second, Update: u.update, Snapshot: func() Snapshot { return *snap }, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	be := pod("be", nil, corev1.Container{Name: "c"})
	*snap = Snapshot{SourcesReady: true, Active: []*corev1.Pod{be}, Running: map[string]map[string]string{"be": {"c": "id-be"}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if clk.HasWaiters() {
			clk.Step(10 * time.Second)
		}
		if m.sentCopy()["id-be"].Size() > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := u.take(); got["id-be"] != "0-7" {
		t.Errorf("Run updated %v", got)
	}
}

// TestExclusiveAndAllocatableCPUs: what the pod resources API reports; a
// container's exclusive CPUs (none on the shared pool), every CPU but the
// reserved one; nothing with the none policy.
func TestExclusiveAndAllocatableCPUs(t *testing.T) {
	snap, u := &Snapshot{SourcesReady: true}, &updates{got: map[string]string{}}
	m, err := newManager(t, t.TempDir(), PolicyStatic, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	gu, be := pod("gu", nil, container("c", "2", "2")), pod("be", nil, corev1.Container{Name: "shared"})
	for _, p := range []*corev1.Pod{gu, be} {
		if ok, r, msg := m.Admit(context.Background(), p, Snapshot{SourcesReady: true, Active: []*corev1.Pod{gu}}); !ok {
			t.Fatalf("Admit %s = %s: %s", p.Name, r, msg)
		}
	}
	if got := m.ExclusiveCPUs("gu", "c").String(); got != "1,5" {
		t.Errorf("ExclusiveCPUs(gu, c) = %q, want 1,5", got)
	}
	if got := m.ExclusiveCPUs("be", "shared"); got.Size() != 0 {
		t.Errorf("ExclusiveCPUs(be, shared) = %q, want none", got)
	}
	if got := m.AllocatableCPUs().String(); got != "1-7" {
		t.Errorf("AllocatableCPUs = %q, want 1-7 (0 reserved)", got)
	}
	none, err := newManager(t, t.TempDir(), PolicyNone, snap, u)
	if err != nil {
		t.Fatal(err)
	}
	if got := none.AllocatableCPUs(); got.Size() != 0 {
		t.Errorf("none: AllocatableCPUs = %q, want none", got)
	}
}
