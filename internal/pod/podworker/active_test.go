package podworker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestActivePods: a pod counts against the node until its containers are
// known stopped or its last status is terminal; a pod with no status yet
// (just admitted) counts.
func TestActivePods(t *testing.T) {
	h := newHarness(t)
	for _, uid := range []types.UID{"running", "succeeded", "stopped"} {
		h.update(UpdateOptions{Type: SyncPodCreate, Pod: newPod(string(uid), "1")})
		h.next("SyncPod", uid).ok()
	}
	h.finishPod("stopped", newPod("stopped", "1"))
	statuses := map[types.UID]corev1.PodStatus{
		"running":   {Phase: corev1.PodRunning},
		"succeeded": {Phase: corev1.PodSucceeded},
		"stopped":   {Phase: corev1.PodRunning},
	}
	get := func(uid types.UID) (corev1.PodStatus, bool) { st, ok := statuses[uid]; return st, ok }
	var pods []*corev1.Pod
	for _, uid := range []types.UID{"running", "succeeded", "stopped", "new"} {
		pods = append(pods, newPod(string(uid), "1"))
	}
	var got []types.UID
	for _, p := range h.w.ActivePods(pods, get) {
		got = append(got, p.UID)
	}
	if diff := cmp.Diff([]types.UID{"running", "new"}, got); diff != "" {
		t.Errorf("ActivePods (-want +got):\n%s", diff)
	}
}
