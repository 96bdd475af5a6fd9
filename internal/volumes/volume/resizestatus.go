package volume

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// What the kubelet writes in a claim's status when it expands its volume,
// as upstream's pkg/volume/util/resize_util.go. Pure: the new status from
// the old, and the patch between them; expand.go sends it.

// msgNodeResizeError is the NodeResizeError condition's message
// (upstream's MarkNodeExpansionFailedCondition and
// MarkNodeExpansionInfeasible); upstream_expand_test.go pins it.
const msgNodeResizeError = "failed to expand pvc with %v"

// resizeConditions are the condition types of a resize (upstream's
// knownResizeConditions); upstream_expand_test.go pins them.
var resizeConditions = []corev1.PersistentVolumeClaimConditionType{
	corev1.PersistentVolumeClaimFileSystemResizePending,
	corev1.PersistentVolumeClaimResizing,
	corev1.PersistentVolumeClaimControllerResizeError,
	corev1.PersistentVolumeClaimNodeResizeError,
}

func isResizeCondition(t corev1.PersistentVolumeClaimConditionType) bool {
	for _, c := range resizeConditions {
		if c == t {
			return true
		}
	}
	return false
}

// mergeResizeConditions sets the claim's resize conditions to set, as
// upstream's MergeResizeConditionOnPVC: other conditions stay; a resize
// condition of a type in set keeps its transition time unless its status
// changes; other resize conditions stay only with keepOld; the types of
// set the claim lacked are appended.
func mergeResizeConditions(pvc *corev1.PersistentVolumeClaim, set []corev1.PersistentVolumeClaimCondition, keepOld bool) {
	done := make([]bool, len(set))
	out := []corev1.PersistentVolumeClaimCondition{}
	for _, c := range pvc.Status.Conditions {
		if !isResizeCondition(c.Type) {
			out = append(out, c)
			continue
		}
		i := -1
		for j := range set {
			if set[j].Type == c.Type {
				i = j
			}
		}
		switch {
		case i >= 0 && set[i].Status != c.Status:
			out = append(out, set[i])
			done[i] = true
		case i >= 0:
			out = append(out, c)
			done[i] = true
		case keepOld:
			out = append(out, c)
		}
	}
	for i, c := range set {
		if !done[i] {
			out = append(out, c)
		}
	}
	pvc.Status.Conditions = out
}

// setResizeStatus sets allocatedResourceStatuses[storage] (upstream's
// mergeStorageResourceStatus).
func setResizeStatus(pvc *corev1.PersistentVolumeClaim, s corev1.ClaimResourceStatus) {
	if pvc.Status.AllocatedResourceStatuses == nil {
		pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{}
	}
	pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] = s
}

// claimInProgress is pvc with the node's expansion in progress (upstream's
// MarkNodeExpansionInProgress).
func claimInProgress(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	out := pvc.DeepCopy()
	setResizeStatus(out, corev1.PersistentVolumeClaimNodeResizeInProgress)
	return out
}

// claimResized is pvc with its expansion to size finished (upstream's
// MarkFSResizeFinished and MarkNodeExpansionFinishedWithRecovery):
// capacity size, allocatedResourceStatuses without storage (none when
// that was all), no resize condition.
func claimResized(pvc *corev1.PersistentVolumeClaim, size resource.Quantity) *corev1.PersistentVolumeClaim {
	out := pvc.DeepCopy()
	if out.Status.Capacity == nil {
		out.Status.Capacity = corev1.ResourceList{}
	}
	out.Status.Capacity[corev1.ResourceStorage] = size
	delete(out.Status.AllocatedResourceStatuses, corev1.ResourceStorage)
	if len(out.Status.AllocatedResourceStatuses) == 0 {
		out.Status.AllocatedResourceStatuses = nil
	}
	mergeResizeConditions(out, nil, false)
	return out
}

// claimExpandFailed is pvc with the node's expansion failed with err
// (upstream's MarkNodeExpansionFailedCondition; with infeasible,
// MarkNodeExpansionInfeasible): the NodeResizeError condition at now
// beside the other resize conditions, and with infeasible
// NodeResizeInfeasible.
func claimExpandFailed(pvc *corev1.PersistentVolumeClaim, err error, infeasible bool, now time.Time) *corev1.PersistentVolumeClaim {
	out := pvc.DeepCopy()
	if infeasible {
		setResizeStatus(out, corev1.PersistentVolumeClaimNodeResizeInfeasible)
	}
	mergeResizeConditions(out, []corev1.PersistentVolumeClaimCondition{{
		Type: corev1.PersistentVolumeClaimNodeResizeError, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(now), Message: fmt.Sprintf(msgNodeResizeError, err),
	}}, true)
	return out
}

// claimStatusPatch is the strategic merge patch from old to updated, with
// old's resourceVersion when checkVersion (upstream's createPVCPatch: the
// status writes after a resize check it, the failure marks do not), for
// the status subresource.
func claimStatusPatch(old, updated *corev1.PersistentVolumeClaim, checkVersion bool) ([]byte, error) {
	oldData, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("marshal claim: %w", err)
	}
	newData, err := json.Marshal(updated)
	if err != nil {
		return nil, fmt.Errorf("marshal claim: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, old)
	if err != nil {
		return nil, fmt.Errorf("create claim status patch: %w", err)
	}
	if !checkVersion {
		return patch, nil
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, fmt.Errorf("read claim status patch: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = old.ResourceVersion
	m["metadata"] = meta
	return json.Marshal(m)
}
