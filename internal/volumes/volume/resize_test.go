package volume

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	gi1 = resource.MustParse("1Gi")
	gi2 = resource.MustParse("2Gi")
	gi3 = resource.MustParse("3Gi")
)

func storage(q resource.Quantity) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: q}
}

// resizeClaim is a claim of 1Gi grown to 2Gi as the resize controller
// leaves it when the node must expand the volume: allocatedResources 2Gi,
// NodeResizePending, FileSystemResizePending; and its volume of 2Gi.
func resizeClaim() (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	pvc, pv := boundClaim("c", "pv1", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "mock.csi", VolumeHandle: "h1"}})
	pvc.ResourceVersion = "7"
	pvc.Spec.Resources.Requests = storage(gi2)
	pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pvc.Status.Capacity = storage(gi1)
	pvc.Status.AllocatedResources = storage(gi2)
	pvc.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
		corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizePending,
	}
	pvc.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{
		Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue,
	}}
	pv.Spec.Capacity = storage(gi2)
	return pvc, pv
}

// legacyClaim is resizeClaim as an older resize controller leaves it: no
// allocatedResources, no resize status.
func legacyClaim(pvc *corev1.PersistentVolumeClaim) {
	pvc.Status.AllocatedResources, pvc.Status.AllocatedResourceStatuses = nil, nil
}

func withStatus(s corev1.ClaimResourceStatus) func(*expandInputs) {
	return func(in *expandInputs) {
		in.PVC.Status.AllocatedResourceStatuses[corev1.ResourceStorage] = s
	}
}

// TestPlanExpansion pins upstream's decision before NodeExpandVolume
// (nodeExpandVolume, expandVolumeDuringMount, checkForRecoveryFromExpansion
// and NodeExpander's runPreCheck): a base case, one change a row.
func TestPlanExpansion(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*expandInputs)
		want expandPlan
	}{
		{"node resize pending", func(*expandInputs) {},
			expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true}},
		{"node resize in progress", withStatus(corev1.PersistentVolumeClaimNodeResizeInProgress),
			expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true}},
		{"the volume is as large as the PV", func(in *expandInputs) { in.OnNode = gi2 },
			expandPlan{Step: expandDone, NewSize: gi2}},
		{"the volume is larger than the PV", func(in *expandInputs) { in.OnNode = gi3 },
			expandPlan{Step: expandDone, NewSize: gi3}},
		{"read-only", func(in *expandInputs) { in.ReadOnly = true },
			expandPlan{Step: expandReadOnly, NewSize: gi1}},
		{"controller resize in progress: wait", withStatus(corev1.PersistentVolumeClaimControllerResizeInProgress),
			expandPlan{Step: expandWait, Recovery: true, NewSize: gi1}},
		{"node resize infeasible: wait for the controller", withStatus(corev1.PersistentVolumeClaimNodeResizeInfeasible),
			expandPlan{Step: expandWait, Recovery: true, NewSize: gi1}},
		{"the new size is allocatedResources, not the PV's", func(in *expandInputs) {
			in.PV.Spec.Capacity = storage(gi3)
		}, expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true}},
		{"older resize controller: the PV's size, legacy", func(in *expandInputs) {
			legacyClaim(in.PVC)
			in.PV.Spec.Capacity = storage(gi3)
		}, expandPlan{Step: expandCall, NewSize: gi3}},
		{"only allocatedResources: recovery", func(in *expandInputs) {
			in.PVC.Status.AllocatedResourceStatuses = nil
		}, expandPlan{Step: expandWait, Recovery: true, NewSize: gi1}},
		{"already expanded elsewhere (RWO): finished without a call", func(in *expandInputs) {
			in.PVC.Status.Capacity = storage(gi2)
			in.PVC.Status.AllocatedResourceStatuses = nil
		}, expandPlan{Step: expandDone, Recovery: true, NewSize: gi2, AlreadyUpdated: true}},
		{"already expanded elsewhere (RWX): expanded here too, claim not written", func(in *expandInputs) {
			in.PVC.Status.Capacity = storage(gi2)
			in.PVC.Status.AllocatedResourceStatuses = nil
			in.PVC.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, AlreadyUpdated: true}},
		{"RWX the controller says needs no node expansion", func(in *expandInputs) {
			in.PVC.Status.Capacity = storage(gi2)
			in.PVC.Status.AllocatedResourceStatuses = nil
			in.PVC.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
			in.PVC.Annotations = map[string]string{nodeExpansionNotRequired: "true"}
		}, expandPlan{Step: expandDone, Recovery: true, NewSize: gi2, AlreadyUpdated: true}},
		{"failed before, request changed since: infeasible on failure", func(in *expandInputs) {
			in.FailedFinal = true
			in.PVC.Spec.Resources.Requests = storage(gi3)
		}, expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true, InfeasibleOnFailure: true}},
		{"failed before, same request", func(in *expandInputs) { in.FailedFinal = true },
			expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pvc, pv := resizeClaim()
			in := expandInputs{PV: pv, PVC: pvc, OnNode: gi1}
			tc.edit(&in)
			if diff := cmp.Diff(tc.want, planExpansion(in)); diff != "" {
				t.Errorf("planExpansion (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExpansionOutcome pins what follows NodeExpandVolume, as upstream's
// legacyCallNodeExpandOnPlugin and NodeExpander's expandOnPlugin.
func TestExpansionOutcome(t *testing.T) {
	legacy := expandPlan{Step: expandCall, NewSize: gi2}
	recovery := expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, MarkInProgress: true}
	updated := expandPlan{Step: expandCall, Recovery: true, NewSize: gi2, AlreadyUpdated: true}
	infeasibleOnFailure := recovery
	infeasibleOnFailure.InfeasibleOnFailure = true
	for _, tc := range []struct {
		name     string
		plan     expandPlan
		capacity resource.Quantity
		r        expandResult
		want     expandOutcome
	}{
		{"legacy ok", legacy, gi1, resultOK, expandOutcome{Finished: true, Succeeded: true, Write: writeFinished}},
		{"legacy ok, claim already has the size", legacy, gi2, resultOK, expandOutcome{Finished: true, Succeeded: true}},
		{"legacy not supported: finished, claim untouched", legacy, gi1, resultNotSupported, expandOutcome{Finished: true}},
		{"legacy in use: finished, no more online", legacy, gi1, resultInUse, expandOutcome{Finished: true, InUse: true}},
		{"legacy failed", legacy, gi1, resultFailed, expandOutcome{Fail: true}},
		{"legacy infeasible", legacy, gi1, resultInfeasible, expandOutcome{Fail: true}},
		{"legacy transient", legacy, gi1, resultTransient, expandOutcome{Fail: true}},
		{"recovery ok", recovery, gi1, resultOK, expandOutcome{Finished: true, Succeeded: true, Write: writeFinished}},
		{"recovery ok, already updated", updated, gi2, resultOK, expandOutcome{Finished: true, Succeeded: true}},
		{"recovery not supported, already updated", updated, gi2, resultNotSupported, expandOutcome{Finished: true}},
		{"recovery not supported: NodeResizeError", recovery, gi1, resultNotSupported,
			expandOutcome{FinalError: true, Write: writeFailed, Fail: true}},
		{"recovery failed: NodeResizeError", recovery, gi1, resultFailed,
			expandOutcome{FinalError: true, Write: writeFailed, Fail: true}},
		{"recovery infeasible: NodeResizeInfeasible", recovery, gi1, resultInfeasible,
			expandOutcome{FinalError: true, Write: writeInfeasible, Fail: true}},
		{"recovery failed, infeasible on failure", infeasibleOnFailure, gi1, resultFailed,
			expandOutcome{FinalError: true, Write: writeInfeasible, Fail: true}},
		{"recovery in use: NodeResizeError, no event, not finished", recovery, gi1, resultInUse,
			expandOutcome{FinalError: true, Write: writeFailed, InUse: true}},
		{"recovery transient: nothing written", recovery, gi1, resultTransient, expandOutcome{Fail: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, expansionOutcome(tc.plan, tc.capacity, tc.r)); diff != "" {
				t.Errorf("expansionOutcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNeedsOnlineExpansion(t *testing.T) {
	zero := resource.Quantity{}
	for _, tc := range []struct {
		name               string
		onNode, pv         resource.Quantity
		readOnly, inUseErr bool
		want               bool
	}{
		{"grown", gi1, gi2, false, false, true},
		{"same", gi2, gi2, false, false, false},
		{"smaller", gi2, gi1, false, false, false},
		{"read-only", gi1, gi2, true, false, false},
		{"in use error before", gi1, gi2, false, true, false},
		{"size on the node unknown", zero, gi2, false, false, false},
		{"PV without capacity", gi1, zero, false, false, false},
	} {
		if got := needsOnlineExpansion(tc.onNode, tc.pv, tc.readOnly, tc.inUseErr); got != tc.want {
			t.Errorf("%s: needsOnlineExpansion = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClaimStatusWrites pins the claim's status after each write, as
// upstream's resize_util.go leaves it.
func TestClaimStatusWrites(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	bound := corev1.PersistentVolumeClaimCondition{Type: "Other", Status: corev1.ConditionTrue}
	resizing := corev1.PersistentVolumeClaimCondition{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue}
	pending := corev1.PersistentVolumeClaimCondition{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}
	nodeErr := corev1.PersistentVolumeClaimCondition{
		Type: corev1.PersistentVolumeClaimNodeResizeError, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(now), Message: "failed to expand pvc with disk full",
	}
	pvc, _ := resizeClaim()
	pvc.Status.Conditions = []corev1.PersistentVolumeClaimCondition{bound, resizing, pending}

	got := claimInProgress(pvc)
	if s := got.Status.AllocatedResourceStatuses[corev1.ResourceStorage]; s != corev1.PersistentVolumeClaimNodeResizeInProgress {
		t.Errorf("in progress: status %q", s)
	}
	if pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] != corev1.PersistentVolumeClaimNodeResizePending {
		t.Error("claimInProgress changed its argument")
	}

	got = claimResized(pvc, gi2)
	want := pvc.Status.DeepCopy()
	want.Capacity, want.AllocatedResourceStatuses = storage(gi2), nil
	want.Conditions = []corev1.PersistentVolumeClaimCondition{bound}
	if diff := cmp.Diff(*want, got.Status); diff != "" {
		t.Errorf("resized (-want +got):\n%s", diff)
	}

	got = claimExpandFailed(pvc, errors.New("disk full"), false, now)
	want = pvc.Status.DeepCopy()
	want.Conditions = append(want.Conditions, nodeErr)
	if diff := cmp.Diff(*want, got.Status); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	got = claimExpandFailed(pvc, errors.New("disk full"), true, now)
	want.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
		corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizeInfeasible,
	}
	if diff := cmp.Diff(*want, got.Status); diff != "" {
		t.Errorf("infeasible (-want +got):\n%s", diff)
	}
	// A condition of the same status keeps its time.
	again := claimExpandFailed(got, errors.New("disk full"), true, now.Add(time.Hour))
	if diff := cmp.Diff(got.Status, again.Status); diff != "" {
		t.Errorf("failed twice (-first +second):\n%s", diff)
	}
}

// TestClaimStatusPatch: the patch carries the old resourceVersion only
// when asked, as upstream's PatchPVCStatus and its failure marks.
func TestClaimStatusPatch(t *testing.T) {
	pvc, _ := resizeClaim()
	for _, check := range []bool{true, false} {
		patch, err := claimStatusPatch(pvc, claimResized(pvc, gi2), check)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Status map[string]any `json:"status"`
		}
		if err := json.Unmarshal(patch, &m); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "7", false: ""}[check]; m.Metadata.ResourceVersion != want {
			t.Errorf("checkVersion %v: resourceVersion %q, want %q (patch %s)", check, m.Metadata.ResourceVersion, want, patch)
		}
		if m.Status["capacity"] == nil {
			t.Errorf("patch %s does not set the capacity", patch)
		}
	}
}
