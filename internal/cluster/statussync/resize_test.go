package statussync

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// TestResizeFieldsReachThePatch: the resize fields berth generates
// (container and pod-level resources and allocatedResources, the
// PodResizePending and PodResizeInProgress conditions) are the kubelet's:
// merge takes them over the API's, drops a resize condition berth no
// longer reports, and the patch carries every change, so the API object
// the patch makes is the merged status.
func TestResizeFieldsReachThePatch(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	api := running()
	api.ContainerStatuses[0].AllocatedResources = rl("100m", "64Mi")
	api.ContainerStatuses[0].Resources = &corev1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("500m", "128Mi")}
	api.AllocatedResources = rl("100m", "64Mi")
	api.Resources = &corev1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("500m", "128Mi")}
	api.Conditions = append(api.Conditions, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonDeferred, LastTransitionTime: mt(t0)})

	ours := running()
	ours.ContainerStatuses[0].AllocatedResources = rl("200m", "64Mi")
	ours.ContainerStatuses[0].Resources = &corev1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("1", "256Mi")}
	ours.AllocatedResources = rl("200m", "64Mi")
	ours.Resources = &corev1.ResourceRequirements{Requests: rl("200m", "64Mi"), Limits: rl("1", "256Mi")}
	inProgress := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
		ObservedGeneration: 2, LastTransitionTime: mt(now)}
	ours.Conditions = append(ours.Conditions, inProgress)

	merged := merge(api, ours, now, false)
	if !apiequality.Semantic.DeepEqual(merged.ContainerStatuses, ours.ContainerStatuses) ||
		!apiequality.Semantic.DeepEqual(merged.AllocatedResources, ours.AllocatedResources) ||
		!apiequality.Semantic.DeepEqual(merged.Resources, ours.Resources) {
		t.Fatalf("merge did not take berth's resources:\n%+v", merged)
	}
	if conditionIndex(merged.Conditions, corev1.PodResizePending) >= 0 {
		t.Errorf("merged conditions keep the stale PodResizePending: %+v", merged.Conditions)
	}
	if i := conditionIndex(merged.Conditions, corev1.PodResizeInProgress); i < 0 || merged.Conditions[i] != inProgress {
		t.Errorf("merged conditions lack PodResizeInProgress: %+v", merged.Conditions)
	}

	patch, unchanged, err := statusPatch("u1", api, merged)
	if err != nil || unchanged {
		t.Fatalf("statusPatch: unchanged %v, err %v", unchanged, err)
	}
	before, err := json.Marshal(corev1.Pod{Status: api})
	if err != nil {
		t.Fatal(err)
	}
	after, err := strategicpatch.StrategicMergePatch(before, patch, corev1.Pod{})
	if err != nil {
		t.Fatalf("apply patch %s: %v", patch, err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(after, &got); err != nil {
		t.Fatal(err)
	}
	if !equal(got.Status, merged) {
		t.Errorf("patch %s\nmakes %+v\nwant %+v", patch, got.Status, merged)
	}
}
