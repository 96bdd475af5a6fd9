package podworker

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// finish drives uid (syncing, idle) through termination to Finished.
func (h *harness) finishPod(uid types.UID, pod *corev1.Pod) {
	h.t.Helper()
	h.update(UpdateOptions{Type: SyncPodKill, Pod: pod})
	h.next("SyncTerminatingPod", uid).ok()
	h.next("SyncTerminatedPod", uid).ok()
	h.waitPhase(uid, Finished)
}

func TestUIDReuseWaitsUntilForgotten(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.finishPod("a", newPod("a", "1"))

	// Updates and creates for a finished UID are ignored...
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2")})
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "3")})
	if !h.w.IsPodKnownTerminated("a") {
		t.Fatal("the finished worker must be kept until forgotten")
	}
	// ...until SyncKnownPods forgets it: the create asked for a restart, so
	// it goes even though the UID is desired, and the caller re-creates it.
	known := h.w.SyncKnownPods(h.ctx, desiredUIDs(newPod("a", "3")))
	if _, ok := known["a"]; ok {
		t.Fatalf("SyncKnownPods kept a: %+v", known)
	}
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "4")})
	if c := h.next("SyncPod", "a"); c.Version != "4" || c.Type != SyncPodCreate {
		t.Errorf("restarted SyncPod(%v, version %q), want create of version 4", c.Type, c.Version)
	} else {
		c.ok()
	}
	h.requeuedAt("a")
}

func TestFinishedDesiredPodIsKept(t *testing.T) {
	h := newHarness(t)
	pod := newPod("a", "1")
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: pod})
	h.next("SyncPod", "a").terminal()
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)

	// A terminal pod still in config stays known (and is not restarted).
	want := map[types.UID]KnownState{"a": {Phase: Finished, HasConfig: true}}
	if diff := cmp.Diff(want, h.w.SyncKnownPods(h.ctx, desiredUIDs(pod))); diff != "" {
		t.Errorf("SyncKnownPods (-want +got):\n%s", diff)
	}
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: pod})
	// Once out of config it is forgotten.
	if diff := cmp.Diff(map[types.UID]KnownState{}, h.w.SyncKnownPods(h.ctx, desiredUIDs())); diff != "" {
		t.Errorf("SyncKnownPods (-want +got):\n%s", diff)
	}
	if h.w.CouldHaveRunningContainers("a") || !h.w.ShouldPodBeFinished("a") {
		t.Error("a forgotten UID runs nothing after the first SyncKnownPods")
	}
}

// TestRuntimeKillSparesASyncingPod: housekeeping kills the runtime pods no
// worker owns, from a listing taken before it asks; a pod admitted
// meanwhile has a worker by the time the kill arrives, and the kill (meant
// for a runtime-only orphan) must not terminate it. Before the fix the
// kill became a kill of the pod's config pod: a pod just admitted was
// stopped, its volumes torn down under its first container.
func TestRuntimeKillSparesASyncingPod(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "a", Name: "a"}})
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2")})
	if c := h.next("SyncPod", "a"); c.Version != "2" {
		t.Errorf("SyncPod of version %q, want 2", c.Version)
	} else {
		c.ok()
	}
	if h.w.IsPodTerminationRequested("a") {
		t.Error("a runtime-only kill terminated a pod its worker is syncing")
	}
	// Nor does it touch a finished one.
	h.finishPod("a", newPod("a", "2"))
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "a"}})
	if !h.w.ShouldPodBeFinished("a") {
		t.Error("finished pod changed")
	}
}

func TestSyncKnownPodsTerminatesOrphans(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("s", "1", static("web"))})
	h.next("SyncPod", "s").ok()
	h.requeuedAt("a")
	h.requeuedAt("s")

	want := map[types.UID]KnownState{
		"a": {Phase: Terminating, Orphan: true, HasConfig: true},
		"s": {Phase: Syncing, HasConfig: true, Static: true},
	}
	if diff := cmp.Diff(want, h.w.SyncKnownPods(h.ctx, desiredUIDs(newPod("s", "1", static("web"))))); diff != "" {
		t.Errorf("SyncKnownPods (-want +got):\n%s", diff)
	}
	term := h.next("SyncTerminatingPod", "a")
	if term.Grace != 30 {
		t.Errorf("orphan grace %d, want the spec's 30", term.Grace)
	}
	term.ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
	if !h.w.ShouldPodContentBeRemoved("a") {
		t.Error("an orphan is deleted: its content may go once terminated")
	}
	want = map[types.UID]KnownState{"s": {Phase: Syncing, HasConfig: true, Static: true}}
	if diff := cmp.Diff(want, h.w.SyncKnownPods(h.ctx, desiredUIDs(newPod("s", "1", static("web"))))); diff != "" {
		t.Errorf("SyncKnownPods (-want +got):\n%s", diff)
	}
}

func TestSyncKnownPodsCancelsOrphanSync(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	sync := h.next("SyncPod", "a")
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	h.waitCancelled(sync)
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

func TestSyncKnownPodsReportsRuntimeOrphan(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "o", Name: "ghost"}})
	c := h.next("SyncTerminatingRuntimePod", "o")
	want := map[types.UID]KnownState{"o": {Phase: Terminating, Orphan: true}}
	if diff := cmp.Diff(want, h.w.SyncKnownPods(h.ctx, desiredUIDs())); diff != "" {
		t.Errorf("SyncKnownPods (-want +got):\n%s", diff)
	}
	c.ok()
	// The poke SyncKnownPods queued is dropped: the orphan is done.
	h.waitGone("o")
}

func TestQueriesForUnknownUIDs(t *testing.T) {
	h := newHarness(t)
	type answers struct{ TermRequested, CouldRun, KnownTerminated, Finished, RuntimeGone, ContentGone bool }
	ask := func() answers {
		return answers{
			h.w.IsPodTerminationRequested("x"), h.w.CouldHaveRunningContainers("x"), h.w.IsPodKnownTerminated("x"),
			h.w.ShouldPodBeFinished("x"), h.w.ShouldPodRuntimeBeRemoved("x"), h.w.ShouldPodContentBeRemoved("x"),
		}
	}
	// Before the first SyncKnownPods berth may have just restarted: an
	// unknown UID may still run.
	if diff := cmp.Diff(answers{CouldRun: true}, ask()); diff != "" {
		t.Errorf("before sync (-want +got):\n%s", diff)
	}
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	if diff := cmp.Diff(answers{Finished: true, RuntimeGone: true, ContentGone: true}, ask()); diff != "" {
		t.Errorf("after sync (-want +got):\n%s", diff)
	}
}

func TestStaticPodWaitsForSameFullName(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("old", "1", static("web"))})
	h.next("SyncPod", "old").ok()
	h.requeuedAt("old")

	// The manifest was edited: same name, new UID. It must wait.
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("new", "1", static("web"))})
	h.eventually("the new pod's worker to look at its update", func() bool {
		h.w.mu.Lock()
		defer h.w.mu.Unlock()
		return len(h.w.workers["new"].wake) == 0
	})
	// An unrelated static pod is not held up.
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("other", "1", static("db"))})
	h.next("SyncPod", "other").ok()
	if h.w.IsPodTerminationRequested("new") || !h.w.CouldHaveRunningContainers("new") {
		t.Error("the waiting pod is neither terminating nor known stopped")
	}

	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("old", "1", static("web"))})
	h.next("SyncTerminatingPod", "old").ok()
	h.next("SyncTerminatedPod", "old").ok()
	if c := h.next("SyncPod", "new"); c.Type != SyncPodCreate {
		t.Errorf("new pod started with %v, want create", c.Type)
	} else {
		c.ok()
	}
	h.requeuedAt("new")
}

func TestStaticPodKilledWhileWaiting(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("old", "1", static("web"))})
	h.next("SyncPod", "old").ok()
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("mid", "1", static("web"))})
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("new", "1", static("web"))})
	// "mid" is removed before it could start: it terminates without ever
	// holding the name, and "new" is next in line.
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("mid", "1", static("web"))})
	h.next("SyncTerminatingPod", "mid").ok()
	h.next("SyncTerminatedPod", "mid").ok()
	h.waitPhase("mid", Finished)

	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("old", "1", static("web"))})
	h.next("SyncTerminatingPod", "old").ok()
	h.next("SyncTerminatedPod", "old").ok()
	h.next("SyncPod", "new").ok()
	h.requeuedAt("new")
}

func TestStaticGateOrder(t *testing.T) {
	g := newStaticGate()
	waiting := map[types.UID]bool{"a": true, "b": true, "c": true}
	still := func(uid types.UID) bool { return waiting[uid] }
	for _, uid := range []types.UID{"a", "b", "c"} {
		g.enqueue("web", uid)
	}
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"b is not first", func() bool { return g.allowStart("web", "b", still) }, false},
		{"a is first", func() bool { return g.allowStart("web", "a", still) }, true},
		{"a holds the name", func() bool { return g.allowStart("web", "a", still) }, true},
		{"b waits for a", func() bool { return g.allowStart("web", "b", still) }, false},
		{"a releases, b is skipped (terminating), c starts", func() bool {
			waiting["a"], waiting["b"] = false, false
			g.release("web", "a")
			return g.allowStart("web", "c", still)
		}, true},
		{"non-static always starts", func() bool { return g.allowStart("", "z", still) }, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: got %v, want %v", s.name, got, s.want)
		}
	}
	if got := g.release("web", "c"); len(got) != 0 {
		t.Errorf("nobody waits any more, got %v", got)
	}
	if len(g.started) != 0 || len(g.waiting) != 0 {
		t.Errorf("gate not empty: %+v", g)
	}
}

func TestOnFinishedAfterThePhaseIsRecorded(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	select {
	case c := <-h.finished:
		t.Fatalf("OnFinished(%s) before the pod terminated", c.uid)
	default:
	}
	h.finishPod("a", newPod("a", "1"))
	c := <-h.finished
	if c.uid != "a" || !c.shouldBeFinished {
		t.Errorf("OnFinished got %+v, want uid a with ShouldPodBeFinished already true", c)
	}
}

// goneCalls returns the Gone calls so far.
func (h *harness) goneCalls() []types.UID {
	var out []types.UID
	for {
		select {
		case uid := <-h.gone:
			out = append(out, uid)
		default:
			return out
		}
	}
}

// TestGoneAsTheRemovedPodFinishes: a pod whose last sync removed it (it
// was no longer desired) is gone as its worker finishes, and is not
// announced again when SyncKnownPods forgets the worker.
func TestGoneAsTheRemovedPodFinishes(t *testing.T) {
	h := newHarness(t)
	pod := newPod("a", "1")
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: pod})
	h.next("SyncPod", "a").ok()
	h.update(UpdateOptions{Type: SyncPodKill, Pod: pod})
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").removed()
	h.w.Wait() // the worker goroutine announced and returned
	if !h.w.ShouldPodBeFinished("a") {
		t.Error("gone before the worker recorded Finished")
	}
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	if diff := cmp.Diff([]types.UID{"a"}, h.goneCalls()); diff != "" {
		t.Errorf("Gone calls (-want +got):\n%s", diff)
	}
}

// TestGoneOnceNoLongerDesired: a finished pod still desired (kept for its
// logs and status) is not gone; once it is no longer desired,
// SyncKnownPods announces it, once.
func TestGoneOnceNoLongerDesired(t *testing.T) {
	h := newHarness(t)
	pod := newPod("a", "1")
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: pod})
	h.next("SyncPod", "a").ok()
	h.finishPod("a", pod)
	h.w.Wait()
	h.w.SyncKnownPods(h.ctx, desiredUIDs(pod))
	if got := h.goneCalls(); len(got) != 0 {
		t.Fatalf("Gone %v while the pod is desired", got)
	}
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	if diff := cmp.Diff([]types.UID{"a"}, h.goneCalls()); diff != "" {
		t.Errorf("Gone calls (-want +got):\n%s", diff)
	}
}

// TestNotGoneWhenCreatedAgain: a finished worker forgotten because its UID
// was created again (a static pod with a fixed UID) is not gone: the pod
// is desired and starts again.
func TestNotGoneWhenCreatedAgain(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.finishPod("a", newPod("a", "1"))
	h.w.Wait()
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "2")})
	if known := h.w.SyncKnownPods(h.ctx, desiredUIDs(newPod("a", "2"))); len(known) != 0 {
		t.Fatalf("SyncKnownPods kept %v", known)
	}
	if got := h.goneCalls(); len(got) != 0 {
		t.Errorf("Gone %v for a pod created again", got)
	}
}

// TestNotGoneWhenCreatedAgainAfterTheSnapshot: the desired pods
// housekeeping passes may be older than the workers; a pod removed and
// created again with the same UID since (a static pod's manifest put
// back) is desired again, and is not gone: its new admission stays.
func TestNotGoneWhenCreatedAgainAfterTheSnapshot(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.finishPod("a", newPod("a", "1"))
	h.w.Wait()
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "2")})
	h.w.SyncKnownPods(h.ctx, desiredUIDs()) // the round's snapshot: without a
	if got := h.goneCalls(); len(got) != 0 {
		t.Errorf("Gone %v for a pod created again", got)
	}
}

// TestGoneAsARuntimeOrphanIsRemoved: a runtime pod no source knows is gone
// once its worker killed and removed it.
func TestGoneAsARuntimeOrphanIsRemoved(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "o", Name: "ghost"}})
	h.next("SyncTerminatingRuntimePod", "o").ok()
	h.w.Wait()
	h.w.SyncKnownPods(h.ctx, desiredUIDs())
	if diff := cmp.Diff([]types.UID{"o"}, h.goneCalls()); diff != "" {
		t.Errorf("Gone calls (-want +got):\n%s", diff)
	}
}

// desiredUIDs is a desired view (syncloop.Desired.Has) of these pods.
func desiredUIDs(pods ...*corev1.Pod) func(types.UID) bool {
	return func(uid types.UID) bool {
		return slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return p.UID == uid })
	}
}
