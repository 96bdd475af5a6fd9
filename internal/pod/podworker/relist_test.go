package podworker

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// takeRelists returns the Relist calls made so far.
func (h *harness) takeRelists() []types.UID {
	var out []types.UID
	for {
		select {
		case uid := <-h.relists:
			out = append(out, uid)
		default:
			return out
		}
	}
}

// Every SyncPod and SyncTerminatingPod of a config pod is followed by an
// on-demand relist of the pod, before the worker's next call; the final
// SyncTerminatedPod and an orphan's kill are not.
func TestRelistAfterCallsThatActOnTheRuntime(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").ok()
	h.requeuedAt("a") // the call is finished
	if diff := cmp.Diff([]types.UID{"a"}, h.takeRelists()); diff != "" {
		t.Fatalf("relists after SyncPod (-want +got):\n%s", diff)
	}
	h.update(UpdateOptions{Type: SyncPodSync, Pod: newPod("a", "1")})
	h.next("SyncPod", "a").fail(errors.New("create sandbox failed"))
	h.eventually("requeue after the back-off", func() bool {
		h.w.retry.mu.Lock()
		defer h.w.retry.mu.Unlock()
		return h.w.retry.due["a"].Equal(epoch.Add(10 * time.Second))
	})
	h.update(UpdateOptions{Type: SyncPodKill, Pod: newPod("a", "1")})
	// The failed sync may have acted too: it is relisted before the kill.
	h.next("SyncTerminatingPod", "a").ok()
	h.next("SyncTerminatedPod", "a").ok()
	h.waitPhase("a", Finished)
	if diff := cmp.Diff([]types.UID{"a", "a"}, h.takeRelists()); diff != "" {
		t.Errorf("relists after the failed SyncPod and SyncTerminatingPod (-want +got):\n%s", diff)
	}

	h.update(UpdateOptions{Type: SyncPodKill, RuntimePod: &runtimestate.Pod{UID: "orphan", Name: "o"}})
	h.next("SyncTerminatingRuntimePod", "orphan").ok()
	h.eventually("orphan forgotten", func() bool {
		h.w.mu.Lock()
		defer h.w.mu.Unlock()
		_, ok := h.w.workers["orphan"]
		return !ok
	})
	if got := h.takeRelists(); len(got) != 0 {
		t.Errorf("orphan relisted: %v", got)
	}
}
