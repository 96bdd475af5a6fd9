package podworker

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

func TestNewValidates(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	cache := &fakeCache{minTimes: map[types.UID][]time.Time{}}
	for name, cfg := range map[string]Config{
		"no syncer":        {Cache: cache, Clock: clk},
		"no cache":         {Syncer: newFakeSyncer(), Clock: clk},
		"no clock":         {Syncer: newFakeSyncer(), Cache: cache},
		"negative resync":  {Syncer: newFakeSyncer(), Cache: cache, Clock: clk, ResyncInterval: -1},
		"negative backoff": {Syncer: newFakeSyncer(), Cache: cache, Clock: clk, BackoffPeriod: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	w, err := New(Config{Syncer: newFakeSyncer(), Cache: cache, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if w.cfg.ResyncInterval != DefaultResyncInterval || w.cfg.BackoffPeriod != DefaultBackoffPeriod || w.cfg.Rand == nil {
		t.Errorf("defaults not applied: %+v", w.cfg)
	}
	if r := w.cfg.Rand(); r < 0 || r >= 1 {
		t.Errorf("default Rand() = %v, want [0, 1)", r)
	}
}

func TestCreateCallsSyncPod(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	c := h.next("SyncPod", "a")
	if c.Type != SyncPodCreate || c.Version != "1" {
		t.Errorf("SyncPod(%v, version %q), want create of version 1", c.Type, c.Version)
	}
	if !h.w.CouldHaveRunningContainers("a") || h.w.IsPodTerminationRequested("a") {
		t.Error("a syncing pod must count as possibly running and not terminating")
	}
	c.ok()
	h.requeuedAt("a")
	if diff := cmp.Diff([]time.Time{{}}, h.cache.asked("a")); diff != "" {
		t.Errorf("first sync must accept any status (-want +got):\n%s", diff)
	}
}

func TestUpdatesCoalesceWhileSyncing(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	first := h.next("SyncPod", "a")
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2")})
	h.update(UpdateOptions{Type: SyncPodSync, Pod: newPod("a", "3")})
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "4")})
	if first.cancelled() {
		t.Error("a non-kill update must not cancel SyncPod")
	}
	h.clock.Step(time.Second)
	first.ok()
	second := h.next("SyncPod", "a")
	if second.Type != SyncPodUpdate || second.Version != "4" {
		t.Errorf("second SyncPod(%v, version %q), want update of version 4", second.Type, second.Version)
	}
	second.ok()
	if at, want := h.requeuedAt("a"), epoch.Add(time.Second+time.Minute); !at.Equal(want) {
		t.Errorf("requeued at %v, want %v", at, want)
	}
	// The second sync needs a status newer than the end of the first.
	if diff := cmp.Diff([]time.Time{{}, epoch.Add(time.Second)}, h.cache.asked("a")); diff != "" {
		t.Errorf("status min times (-want +got):\n%s", diff)
	}
}

func TestKillWhileSyncing(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	sync := h.next("SyncPod", "a")
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "2"), KillGracePeriod: ptr.To[int64](5)})
	if !h.w.IsPodTerminationRequested("a") {
		t.Error("termination must be visible as soon as the kill is enqueued")
	}
	h.waitCancelled(sync) // the fake returns ctx.Err()

	term := h.next("SyncTerminatingPod", "a")
	if term.Grace != 5 || term.Version != "2" {
		t.Errorf("SyncTerminatingPod(grace %d, version %q), want grace 5 of version 2", term.Grace, term.Version)
	}
	if h.w.IsPodKnownTerminated("a") || !h.w.CouldHaveRunningContainers("a") {
		t.Error("a terminating pod may still run containers")
	}
	term.ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
	if !h.w.IsPodKnownTerminated("a") || h.w.CouldHaveRunningContainers("a") || !h.w.ShouldPodBeFinished("a") {
		t.Error("a finished pod is known terminated, runs nothing and is finished")
	}
	if h.w.ShouldPodContentBeRemoved("a") {
		t.Error("a pod killed but not deleted keeps its content")
	}
}

func TestShorterGraceCancelsTerminatingLongerIgnored(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1")})
	first := h.next("SyncTerminatingPod", "a")
	if first.Grace != 30 {
		t.Errorf("first grace %d, want the spec's 30", first.Grace)
	}

	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1"), KillGracePeriod: ptr.To[int64](60)})
	if first.cancelled() {
		t.Fatal("a longer grace period must not cancel SyncTerminatingPod")
	}
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "2"), KillGracePeriod: ptr.To[int64](10)})
	if !first.cancelled() {
		t.Fatal("a shorter grace period must cancel SyncTerminatingPod")
	}
	second := h.next("SyncTerminatingPod", "a")
	if second.Grace != 10 || second.Version != "2" {
		t.Errorf("re-called with grace %d version %q, want 10 of version 2", second.Grace, second.Version)
	}

	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "3"), KillGracePeriod: ptr.To[int64](20)})
	if second.cancelled() {
		t.Fatal("a longer grace period must not cancel SyncTerminatingPod")
	}
	second.fail(errors.New("container still running"))
	// The pending kill runs at once (no backoff), still with grace 10.
	third := h.next("SyncTerminatingPod", "a")
	if third.Grace != 10 || third.Version != "3" {
		t.Errorf("retried with grace %d version %q, want 10 of version 3", third.Grace, third.Version)
	}
	third.ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

func TestTerminalFromSyncPod(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").terminal()
	term := h.next("SyncTerminatingPod", "a")
	if term.Grace != 30 {
		t.Errorf("grace %d, want the spec's 30", term.Grace)
	}
	if !h.w.IsPodTerminationRequested("a") {
		t.Error("a pod that reached a terminal phase is terminating")
	}
	term.ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

func TestTerminalPhaseInConfigRequestsTermination(t *testing.T) {
	h := newHarness(t)
	pod := newPod("a", "1")
	pod.Status.Phase = "Succeeded"
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: pod})
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

func TestErrorRequeuesAfterBackoff(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").fail(errors.New("image pull failed"))
	if at, want := h.requeuedAt("a"), epoch.Add(10*time.Second); !at.Equal(want) {
		t.Fatalf("requeued at %v, want %v", at, want)
	}
	h.clock.Step(9 * time.Second)
	h.w.SyncDue(h.ctx)
	if at := h.requeuedAt("a"); !at.Equal(epoch.Add(10 * time.Second)) {
		t.Fatalf("requeue changed before it was due: %v", at)
	}
	h.clock.Step(time.Second)
	h.w.SyncDue(h.ctx)
	retry := h.next("SyncPod", "a")
	if retry.Type != SyncPodSync || retry.Version != "1" {
		t.Errorf("retry SyncPod(%v, version %q), want sync of version 1", retry.Type, retry.Version)
	}
	retry.ok()
	h.requeuedAt("a")
}

func TestErrorInTerminatingRequeuesAfterBackoff(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1")})
	h.next("SyncTerminatingPod", "a").fail(errors.New("runtime down"))
	h.clock.Step(h.requeuedAt("a").Sub(h.clock.Now()))
	h.w.SyncDue(h.ctx)
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").fail(errors.New("sandbox busy"))
	h.clock.Step(h.requeuedAt("a").Sub(h.clock.Now()))
	h.w.SyncDue(h.ctx)
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

// TestSyncAgainRunsAtOnce: SyncPod asking for another sync (a
// RestartAllContainers reset) gets it right away, without the back-off or
// the resync interval, over a runtime status newer than its end.
func TestSyncAgainRunsAtOnce(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.requeuedAt("a")
	h.clock.Step(time.Second)
	h.update(UpdateOptions{Type: SyncPodSync, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").again()
	again := h.next("SyncPod", "a") // no clock step, no SyncDue
	if again.Type != SyncPodSync || again.Version != "1" {
		t.Errorf("SyncPod(%v, version %q), want sync of version 1", again.Type, again.Version)
	}
	again.ok()
	if at, want := h.requeuedAt("a"), epoch.Add(time.Second+time.Minute); !at.Equal(want) {
		t.Errorf("requeued at %v, want %v (the resync interval)", at, want)
	}
	if diff := cmp.Diff([]time.Time{{}, epoch, epoch.Add(time.Second)}, h.cache.asked("a")); diff != "" {
		t.Errorf("statuses asked for (-want +got):\n%s", diff)
	}
}

func TestResyncAfterInterval(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	if at, want := h.requeuedAt("a"), epoch.Add(time.Minute); !at.Equal(want) {
		t.Fatalf("requeued at %v, want %v", at, want)
	}
	h.clock.Step(time.Minute)
	h.w.SyncDue(h.ctx)
	resync := h.next("SyncPod", "a")
	if resync.Type != SyncPodSync {
		t.Errorf("resync type %v, want sync", resync.Type)
	}
	resync.ok()
	h.requeuedAt("a")
}

func TestJitter(t *testing.T) {
	w := &Workers{cfg: Config{Rand: func() float64 { return 0.5 }}}
	if got, want := w.jitter(time.Minute), 75*time.Second; got != want {
		t.Errorf("jitter(1m) with rand 0.5 = %v, want %v", got, want)
	}
}

func TestOrphanKill(t *testing.T) {
	h := newHarness(t)
	rt := &runtimestate.Pod{UID: "o", Name: "ghost", Namespace: "default"}
	h.update(UpdateOptions{Type: SyncPodSync, RuntimePod: rt})
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: rt})
	c := h.next("SyncTerminatingRuntimePod", "o")
	if c.Version != "ghost" {
		t.Errorf("killed runtime pod %q, want ghost", c.Version)
	}
	if !h.w.IsPodTerminationRequested("o") {
		t.Error("an orphan being killed is terminating")
	}
	c.ok()
	h.waitGone("o")
	// Once gone, the UID is unknown again and may be killed again.
	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: rt})
	h.next("SyncTerminatingRuntimePod", "o").ok()
	h.waitGone("o")
}

func TestDeletedPodIsTerminatedWithDeletionGrace(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2", deleting(7))})
	term := h.next("SyncTerminatingPod", "a")
	if term.Grace != 7 {
		t.Errorf("grace %d, want the deletion's 7", term.Grace)
	}
	if h.w.ShouldPodContentBeRemoved("a") {
		t.Error("content stays until the containers stopped")
	}
	term.ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
	if !h.w.ShouldPodContentBeRemoved("a") {
		t.Error("a deleted, terminated pod's content may be removed")
	}
}

func TestEvictedPodContentRemovable(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1"), KillReason: "Evicted"})
	if !h.w.ShouldPodContentBeRemoved("a") {
		t.Error("an evicted pod's content may be removed at once")
	}
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
}

func TestShutdownStopsWorkers(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("b", "1")})
	// Leave both calls unanswered: cleanup cancels the context, the fake
	// returns ctx.Err(), and Wait must join both goroutines.
	seen := map[types.UID]bool{}
	for range 2 {
		select {
		case c := <-h.syncer.calls:
			seen[c.UID] = true
		case <-time.After(guard):
			t.Fatal("SyncPod not called")
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("calls seen for %v, want a and b", seen)
	}
}

func TestDeletionAfterKillFreesContent(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1")})
	term := h.next("SyncTerminatingPod", "a")
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "2", deleting(60))})
	if term.cancelled() {
		t.Error("a deletion with a longer grace period must not cancel termination")
	}
	term.ok()
	if c := h.next("SyncTerminatedPod", "a"); c.Version != "2" {
		t.Errorf("SyncTerminatedPod of version %q, want the latest, 2", c.Version)
	} else {
		c.ok()
	}
	h.waitPhase("a", Finished)
	if !h.w.ShouldPodContentBeRemoved("a") {
		t.Error("a pod deleted while terminating may have its content removed")
	}
}

// TestKillReasonReachesSyncer: the first kill with a reason is what every
// SyncTerminatingPod call is told, through later updates without one and a
// later kill with another, and across a retry.
func TestKillReasonReachesSyncer(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	sync := h.next("SyncPod", "a")
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "2"), KillGracePeriod: ptr.To[int64](5),
		KillReason: "Terminated", KillMessage: "Pod was terminated in response to imminent node shutdown."})
	h.waitCancelled(sync)
	term := h.next("SyncTerminatingPod", "a")
	if term.Reason != "Terminated" || term.Grace != 5 {
		t.Errorf("SyncTerminatingPod(reason %q, grace %d); want Terminated, 5", term.Reason, term.Grace)
	}
	// While it terminates: an update without a reason, a kill with another.
	h.update(UpdateOptions{Type: SyncPodUpdate, Pod: newPod("a", "3")})
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "4"), KillReason: "Evicted", KillNoDisruptionTarget: true})
	term.fail(errors.New("runtime down"))
	if again := h.next("SyncTerminatingPod", "a"); again.Reason != "Terminated" || again.Version != "4" || again.NoDisruption {
		t.Errorf("SyncTerminatingPod after the failure (reason %q, version %q, no disruption %v); want the first kill's Terminated with its condition, version 4",
			again.Reason, again.Version, again.NoDisruption)
	}
}

// TestKillWithoutDisruptionTarget: a kill that asks for no
// DisruptionTarget (a local storage eviction) says so to the Syncer.
func TestKillWithoutDisruptionTarget(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	sync := h.next("SyncPod", "a")
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "2"), KillReason: "Evicted", KillNoDisruptionTarget: true})
	h.waitCancelled(sync)
	if term := h.next("SyncTerminatingPod", "a"); term.Reason != "Evicted" || !term.NoDisruption {
		t.Errorf("SyncTerminatingPod(reason %q, no disruption %v); want Evicted, true", term.Reason, term.NoDisruption)
	}
}
