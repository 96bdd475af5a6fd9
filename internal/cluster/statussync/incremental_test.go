package statussync

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// namedPod is apiPod with its own name, so several can coexist.
func namedPod(uid, name string) *corev1.Pod {
	p := apiPod(uid, corev1.PodPending)
	p.Name = name
	return p
}

// takeLookups returns the config pod lookups since the last call.
func (e *env) takeLookups() map[types.UID]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.lookups
	e.lookups = map[types.UID]int{}
	return l
}

// startWritten starts the syncer with every pod's running status stored
// and written, and the lookups and requests of that start taken.
func (e *env) startWritten(uids ...types.UID) {
	e.t.Helper()
	for _, uid := range uids {
		e.store.Set(uid, running())
	}
	e.start()
	e.waitPass(false) // the store's signal of the Sets above
	e.takeLookups()
	e.requests()
}

// A pass on a store change plans the pods that changed, not every pod of
// the node: in a burst, each pass then costs what changed.
func TestRunPlansOnlyChangedPods(t *testing.T) {
	e := newEnv(t, namedPod("u1", "web-1"), namedPod("u2", "web-2"), namedPod("u3", "web-3"))
	e.startWritten("u1", "u2", "u3")

	e.store.Set("u2", failed())
	e.waitPass(false)
	if diff := cmp.Diff(map[types.UID]int{"u2": 1}, e.takeLookups()); diff != "" {
		t.Errorf("pods planned on u2's change (-want +got):\n%s", diff)
	}
	// The patch starts from the object the last write left: no GET.
	want := []string{"patch pods/status default/web-2"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	// The periodic pass still looks at every pod.
	e.tick()
	if got := e.takeLookups(); len(got) != 3 {
		t.Errorf("pods planned on the periodic pass: %v, want all three", got)
	}
}

// A pod whose write failed is planned again on the next pass, whatever
// triggers it, not only on the periodic one.
func TestRunRetriesFailedWriteOnTheNextPass(t *testing.T) {
	e := newEnv(t, namedPod("u1", "web-1"), namedPod("u2", "web-2"))
	e.startWritten("u2")
	e.failPatches(1, apierrors.NewServiceUnavailable("apiserver is restarting"))
	e.store.Set("u1", running())
	e.waitPass(false)
	e.requests()

	e.store.Set("u2", failed())
	e.waitPass(false)
	// web-1's failed patch may have been applied: it is read first.
	want := []string{"get pods default/web-1", "patch pods/status default/web-1", "patch pods/status default/web-2"}
	got := e.requests()
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("requests of the pass after the failure (-want +got):\n%s", diff)
	}
	if p, _ := e.apiPod("default", "web-1"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("web-1 phase %s, want Running", p.Status.Phase)
	}
}

// A static pod's status waits for its mirror pod; once the mirror pod is
// there, the next pass writes it though the status did not change.
func TestRunStaticPodWaitsForItsMirrorOnEveryPass(t *testing.T) {
	static := staticPod("hash1")
	e := newEnv(t, namedPod("u2", "web-2"))
	e.static["hash1"] = static
	e.startWritten("u2")
	e.store.Set("hash1", running())
	e.waitPass(false)
	if got := e.requests(); len(got) != 0 {
		t.Fatalf("requests without a mirror pod: %v", got)
	}
	if err := e.cs.Tracker().Add(mirrorOf(static, "m1", corev1.PodPending)); err != nil {
		t.Fatal(err)
	}

	e.store.Set("u2", failed())
	e.waitPass(false)
	if p, _ := e.apiPod("kube-system", static.Name); p.Status.Phase != corev1.PodRunning {
		t.Errorf("mirror pod phase %s, want Running", p.Status.Phase)
	}
	if got := e.takeLookups(); got["hash1"] != 2 {
		t.Errorf("static pod planned %d times since the start, want 2 (while it had no mirror pod, and after)", got["hash1"])
	}
}

// A write patches from the object berth's last write left, not from the
// API source's view, which may not have seen that write yet: from the
// view, the patch would not remove a condition the last write added (a
// strategic merge patch merges conditions by type).
func TestRunPatchesFromTheLastWrite(t *testing.T) {
	e := newEnv(t, namedPod("u1", "web-1"))
	e.stale["u1"] = namedPod("u1", "web-1")
	e.start()
	resizing := running()
	resizing.Conditions = append(resizing.Conditions, cond(corev1.PodResizeInProgress, corev1.ConditionTrue, t0))
	e.store.Set("u1", resizing)
	e.waitPass(false)
	e.store.Set("u1", running())
	e.waitPass(false)
	if diff := cmp.Diff([]string{"patch pods/status default/web-1", "patch pods/status default/web-1"}, e.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	p, err := e.apiPod("default", "web-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodResizeInProgress {
			t.Errorf("API conditions still have %s after the write that removed it: %v", c.Type, p.Status.Conditions)
		}
	}
}

// After a PATCH that failed (it may have been applied all the same: a
// timeout), the next write reads the object before patching it.
func TestRunReadsThePodAfterAFailedPatch(t *testing.T) {
	e := newEnv(t, namedPod("u1", "web-1"))
	e.startWritten("u1")
	e.failPatches(1, apierrors.NewTimeoutError("request did not complete within the allowed duration", 1))
	notReady := running()
	notReady.ContainerStatuses[0].Ready = false
	e.store.Set("u1", notReady)
	e.waitPass(false)
	e.store.Set("u1", running())
	e.waitPass(false)
	// The failed patch; then the status last written is berth's again,
	// which the pod on the server shows: nothing to patch.
	want := []string{"patch pods/status default/web-1", "get pods default/web-1"}
	if diff := cmp.Diff(want, e.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
