package volume

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node's part of a claim's expansion, as upstream's kubelet decides
// it (pkg/volume/util/operationexecutor: nodeExpandVolume,
// expandVolumeDuringMount, checkForRecoveryFromExpansion,
// legacyCallNodeExpandOnPlugin and NodeExpander; the actual state of the
// world's volumeNeedsExpansion). Pure: expand.go performs it.
//
// A CSI volume's size on the node is the claim's status capacity when
// the pod's claim was resolved, and the size it was expanded to since.
// The resize controller (the external-resizer) expands the volume, raises
// the PersistentVolume's capacity and, when the driver says the node must
// expand it too, sets the claim's allocatedResourceStatuses[storage] to
// NodeResizePending and its allocatedResources[storage] to the new size.
// The kubelet then calls NodeExpandVolume: while the volume is mounted,
// when the PersistentVolume's capacity exceeds the size on the node
// (online), and right after a publication, when it exceeds the claim's
// status capacity (at mount).

// nodeExpansionNotRequired is the claim annotation by which the resize
// controller says a ReadWriteMany volume needs no expansion on the other
// nodes (upstream's volumetypes.NodeExpansionNotRequired).
const nodeExpansionNotRequired = "volume.kubernetes.io/node-expansion-not-required"

// storageOf is the storage quantity of a resource list (zero when unset).
func storageOf(l corev1.ResourceList) resource.Quantity {
	return l[corev1.ResourceStorage].DeepCopy()
}

// needsOnlineExpansion reports whether a mounted volume is expanded on
// the node (upstream's volumeNeedsExpansion, with the desired-state
// populator's skip of read-only volumes): the PersistentVolume's capacity
// exceeds the size on the node, both known, and the driver did not
// answer that it cannot expand the volume in use.
func needsOnlineExpansion(onNode, pvCapacity resource.Quantity, readOnly, inUseError bool) bool {
	if readOnly || inUseError || onNode.IsZero() || pvCapacity.IsZero() {
		return false
	}
	return pvCapacity.Cmp(onNode) > 0
}

// expandStep is what an expansion does first.
type expandStep int

const (
	// expandDone: nothing to do, the volume has its size (upstream:
	// resize finished without a call).
	expandDone expandStep = iota
	// expandReadOnly: the pod mounts the volume read-only; a
	// FileSystemResizeFailed warning goes to the pod and the claim, and
	// the expansion counts as finished.
	expandReadOnly
	// expandWait: the resize controller has not asked for a node
	// expansion (allocatedResourceStatuses is neither NodeResizePending
	// nor NodeResizeInProgress); not finished, tried again later.
	expandWait
	// expandCall: NodeExpandVolume.
	expandCall
)

// expandInputs is what an expansion is decided from.
type expandInputs struct {
	PV *corev1.PersistentVolume
	// PVC is the claim as read just now.
	PVC *corev1.PersistentVolumeClaim
	// OnNode is the size the node knows: online, the volume's size on the
	// node; at mount, the claim's status capacity.
	OnNode resource.Quantity
	// ReadOnly: the pod's claim asks for the volume read-only.
	ReadOnly bool
	// FailedFinal: an expansion of the volume failed before with a final
	// error (upstream's CheckVolumeInFailedExpansionWithFinalErrors).
	FailedFinal bool
}

// expandPlan is the decision before the call.
type expandPlan struct {
	Step expandStep
	// Recovery: the resize controller records allocatedResources or
	// allocatedResourceStatuses (upstream's checkForRecoveryFromExpansion),
	// so the expansion goes as upstream's NodeExpander; otherwise as its
	// legacyCallNodeExpandOnPlugin.
	Recovery bool
	// NewSize is what the driver is asked for: the PersistentVolume's
	// capacity, or with Recovery the claim's allocatedResources. With
	// expandDone and expandReadOnly it is the size on the node after.
	NewSize resource.Quantity
	// AlreadyUpdated: the claim's status has the size and no resize
	// status (Recovery only): the claim is not written.
	AlreadyUpdated bool
	// MarkInProgress: the claim's allocatedResourceStatuses[storage]
	// becomes NodeResizeInProgress before the call.
	MarkInProgress bool
	// InfeasibleOnFailure: a final failure marks the expansion
	// NodeResizeInfeasible, whatever the driver said: the user changed the
	// request since an earlier final failure, the controller must
	// reconcile it.
	InfeasibleOnFailure bool
}

// planExpansion decides an expansion of in.PV's volume, as upstream's
// nodeExpandVolume (online) and expandVolumeDuringMount (at mount) with
// NodeExpander's runPreCheck.
func planExpansion(in expandInputs) expandPlan {
	pvCapacity := storageOf(in.PV.Spec.Capacity)
	status := in.PVC.Status
	statusCapacity := storageOf(status.Capacity)
	if pvCapacity.Cmp(in.OnNode) <= 0 {
		return expandPlan{Step: expandDone, NewSize: in.OnNode}
	}
	if in.ReadOnly {
		return expandPlan{Step: expandReadOnly, NewSize: statusCapacity}
	}
	resizeStatus := status.AllocatedResourceStatuses[corev1.ResourceStorage]
	if resizeStatus == "" && status.AllocatedResources == nil {
		return expandPlan{Step: expandCall, NewSize: pvCapacity}
	}
	p := expandPlan{Recovery: true, NewSize: storageOf(status.AllocatedResources)}
	request := storageOf(in.PVC.Spec.Resources.Requests)
	p.InfeasibleOnFailure = request.Cmp(p.NewSize) != 0 && in.FailedFinal
	p.AlreadyUpdated = statusCapacity.Cmp(p.NewSize) >= 0 && resizeStatus == ""
	allowed := resizeStatus == corev1.PersistentVolumeClaimNodeResizePending ||
		resizeStatus == corev1.PersistentVolumeClaimNodeResizeInProgress ||
		p.AlreadyUpdated && slices.Contains(in.PVC.Spec.AccessModes, corev1.ReadWriteMany) &&
			!metav1.HasAnnotation(in.PVC.ObjectMeta, nodeExpansionNotRequired)
	switch {
	case allowed:
		p.Step, p.MarkInProgress = expandCall, !p.AlreadyUpdated
	case p.AlreadyUpdated:
		p.Step = expandDone
	default:
		p.Step, p.NewSize = expandWait, in.OnNode
	}
	return p
}

// expandResult is how NodeExpandVolume went, as csi.Mounter.Expand
// classifies it.
type expandResult int

const (
	resultOK expandResult = iota
	resultFailed
	resultTransient
	resultNotSupported
	resultInUse
	resultInfeasible
)

// claimWrite is a write of the claim's status after the call.
type claimWrite int

const (
	writeNone claimWrite = iota
	// writeFinished: capacity the new size, no resize status, no resize
	// conditions (upstream's MarkFSResizeFinished and
	// MarkNodeExpansionFinishedWithRecovery, the same with
	// RecoverVolumeExpansionFailure, GA and locked on).
	writeFinished
	// writeFailed: the NodeResizeError condition
	// (MarkNodeExpansionFailedCondition).
	writeFailed
	// writeInfeasible: NodeResizeInfeasible and the NodeResizeError
	// condition (MarkNodeExpansionInfeasible).
	writeInfeasible
)

// expandOutcome is what follows the call.
type expandOutcome struct {
	// Finished: the volume has NewSize on the node (upstream's
	// MarkVolumeAsResized, online only).
	Finished bool
	// Succeeded: FileSystemResizeSuccessful to the pod and the claim.
	Succeeded bool
	Write     claimWrite
	// FinalError and InUse are remembered for the volume: an earlier
	// final failure (InfeasibleOnFailure), and no more online expansion
	// while it stays mounted.
	FinalError, InUse bool
	// Fail: the expansion failed with the driver's error (online a
	// VolumeResizeFailed warning, at mount a failed mount).
	Fail bool
}

// expansionOutcome decides what follows a call planned by p that ended
// with r, as upstream's legacyCallNodeExpandOnPlugin and NodeExpander's
// expandOnPlugin. statusCapacity is the claim's status capacity.
func expansionOutcome(p expandPlan, statusCapacity resource.Quantity, r expandResult) expandOutcome {
	if !p.Recovery {
		switch r {
		case resultOK:
			w := writeNone // the claim has the size already
			if statusCapacity.Cmp(p.NewSize) < 0 {
				w = writeFinished
			}
			return expandOutcome{Finished: true, Succeeded: true, Write: w}
		case resultNotSupported:
			return expandOutcome{Finished: true}
		case resultInUse:
			return expandOutcome{Finished: true, InUse: true}
		}
		return expandOutcome{Fail: true}
	}
	switch {
	case r == resultOK && p.AlreadyUpdated:
		return expandOutcome{Finished: true, Succeeded: true}
	case r == resultOK:
		return expandOutcome{Finished: true, Succeeded: true, Write: writeFinished}
	case r == resultNotSupported && p.AlreadyUpdated:
		return expandOutcome{Finished: true}
	case r == resultTransient:
		return expandOutcome{Fail: true}
	}
	out := expandOutcome{FinalError: true, Write: writeFailed, Fail: true}
	if r == resultInfeasible || p.InfeasibleOnFailure {
		out.Write = writeInfeasible
	}
	if r == resultInUse {
		out.InUse, out.Fail = true, false
	}
	return out
}
