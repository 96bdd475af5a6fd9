package statussync

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// statusPatch returns the strategic merge patch of pods/status that takes
// the API object uid from old to new, as upstream's PatchPodStatus: the
// patch always carries metadata.uid, which makes the API server refuse it
// (409 Conflict) when the object of that name is another one now. unchanged
// reports that the patch would change nothing else.
func statusPatch(uid types.UID, old, new corev1.PodStatus) (patch []byte, unchanged bool, err error) {
	oldData, err := json.Marshal(corev1.Pod{Status: old})
	if err != nil {
		return nil, false, fmt.Errorf("marshal old status: %w", err)
	}
	newData, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: new})
	if err != nil {
		return nil, false, fmt.Errorf("marshal new status: %w", err)
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("create status patch: %w", err)
	}
	return patch, bytes.Equal(patch, fmt.Appendf(nil, `{"metadata":{"uid":%q}}`, uid)), nil
}
