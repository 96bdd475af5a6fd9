package podworker

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// PodStatuses returns a pod's last generated status, if any
// (podstatus.Store.Get).
type PodStatuses func(uid types.UID) (corev1.PodStatus, bool)

// IsActive reports whether an admitted pod still counts against the node
// (upstream's filterOutInactivePods, the one rule for admission, the
// resource managers, resizes, eviction and node shutdown): its containers
// are not known to be stopped, and its last status has no terminal phase.
func (w *Workers) IsActive(uid types.UID, statuses PodStatuses) bool {
	if w.IsPodKnownTerminated(uid) {
		return false
	}
	st, ok := statuses(uid)
	return !ok || !podutil.IsTerminal(st.Phase)
}

// ActivePods returns the pods of pods that IsActive, in their order.
func (w *Workers) ActivePods(pods []*corev1.Pod, statuses PodStatuses) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if w.IsActive(p.UID, statuses) {
			out = append(out, p)
		}
	}
	return out
}
