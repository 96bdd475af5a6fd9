package volume

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// CSIExpander has a driver expand a published CSI volume (csi.Mounter).
type CSIExpander interface {
	Expand(ctx context.Context, pod *corev1.Pod, v csi.Volume, e csi.Expansion) error
}

// ClaimEventRecorder records events about claims.
type ClaimEventRecorder interface {
	ClaimEventf(pvc *corev1.PersistentVolumeClaim, eventType, reason, messageFmt string, args ...any)
}

// Upstream's event reasons (pkg/kubelet/events) and messages
// (operation_generator.go, node_expander.go, resize_util.go);
// upstream_expand_test.go pins them.
const (
	reasonVolumeResizeFailed      = "VolumeResizeFailed"
	reasonFileSystemResizeFailed  = "FileSystemResizeFailed"
	reasonFileSystemResizeSuccess = "FileSystemResizeSuccessful"

	// msgVolume is upstream's generateVolumeMsg: prefix, volume, suffix.
	msgVolume          = "%v for volume %q %v"
	msgExpandSucceeded = "MountVolume.NodeExpandVolume succeeded"
	msgExpandFailed    = "MountVolume.NodeExpandVolume failed"
	msgReadOnly        = "requested read-only file system"
	msgOnlineFailed    = "NodeExpandVolume.NodeExpandVolume failed"
	msgMountFailed     = "MountVolume.Setup failed while expanding volume"
	msgMapFailed       = "MapVolume.MarkVolumeAsMounted failed while expanding volume"
	msgGetPVC          = "mountVolume.NodeExpandVolume get PVC failed : %w"
	msgUpdateLegacy    = "mountVolume.NodeExpandVolume update PVC status failed : %w"
	msgUpdateRecovery  = "mountVolume.NodeExpandVolume update pvc status failed: %w"
	msgPatchPVC        = "patchPVCStatus failed to patch PVC %q: %w"
)

// volumeError is an error whose message is the whole event, worded as
// upstream's (recordFailure does not prefix it), of reason (""
// FailedMount).
type volumeError struct{ msg, reason string }

func (e *volumeError) Error() string { return e.msg }

// setUpCSIClaim publishes a claim's CSI volume, expanding it on the node
// right after a publication when its PersistentVolume is larger than the
// claim's status capacity (upstream's expandVolumeDuringMount; a failure
// fails the set-up, which is then tried again, publication included);
// on a refresh it expands a published volume whose PersistentVolume grew
// (upstream's in-use expansion, GenerateExpandInUseVolumeFunc).
func (m *Manager) setUpCSIClaim(ctx context.Context, pod *corev1.Pod, v corev1.Volume, c *claimed, refresh bool) (string, error) {
	dir, err := m.setUpCSI(ctx, pod, v.Name, persistentCSI(c), refresh, func(ctx context.Context) error {
		return m.expandAtMount(ctx, pod, c)
	})
	if err != nil || !refresh {
		return dir, err
	}
	m.expandOnline(ctx, pod, c)
	return dir, nil
}

// expandAtMount expands c's volume just published (or, a block volume,
// mapped) for pod when the claim's status capacity is below the
// PersistentVolume's. A failure is upstream's FailedMount ("MountVolume.
// Setup failed while expanding volume"), or for a block volume its
// FailedMapVolume ("MapVolume.MarkVolumeAsMounted failed while expanding
// volume").
func (m *Manager) expandAtMount(ctx context.Context, pod *corev1.Pod, c *claimed) error {
	if m.cfg.Expander == nil || m.cfg.Client == nil {
		return nil
	}
	fail := func(err error) error {
		if isBlock(c.volume) {
			return &volumeError{reason: reasonFailedMapVolume, msg: fmt.Sprintf(msgVolume, msgMapFailed, c.volume.Name, ": "+err.Error())}
		}
		return &volumeError{msg: fmt.Sprintf(msgVolume, msgMountFailed, c.volume.Name, ": "+err.Error())}
	}
	pvc, err := m.cfg.Client.CoreV1().PersistentVolumeClaims(c.claim.Namespace).Get(ctx, c.claim.Name, metav1.GetOptions{})
	if err != nil {
		return fail(fmt.Errorf(msgGetPVC, err))
	}
	if err := m.expandVolume(ctx, pod, c, pvc, storageOf(pvc.Status.Capacity), true); err != nil {
		return fail(err)
	}
	return nil
}

// expandOnline expands c's published volume when its PersistentVolume,
// read again, is larger than the volume's size on the node. A failure is
// a VolumeResizeFailed warning on the pod; the next refresh tries again.
func (m *Manager) expandOnline(ctx context.Context, pod *corev1.Pod, c *claimed) {
	if m.cfg.Expander == nil || m.cfg.Client == nil {
		return
	}
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", c.volume.Name)
	pv, err := m.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, c.volume.Name, metav1.GetOptions{})
	if err != nil {
		log.V(2).Info("Cannot read the PersistentVolume for its size", "err", err)
		return
	}
	if checkBinding(pv, c.claim) != nil || pv.Spec.CSI == nil {
		return
	}
	c.volume = pv
	if !needsOnlineExpansion(c.size, storageOf(pv.Spec.Capacity), c.readOnly, c.expandInUse) {
		return
	}
	pvc, err := m.cfg.Client.CoreV1().PersistentVolumeClaims(c.claim.Namespace).Get(ctx, c.claim.Name, metav1.GetOptions{})
	if err == nil {
		err = m.expandVolume(ctx, pod, c, pvc, c.size, false)
	} else {
		err = fmt.Errorf(msgGetPVC, err)
	}
	if err != nil {
		log.Error(err, "Online expansion of the volume failed")
		m.podEvent(pod, corev1.EventTypeWarning, reasonVolumeResizeFailed, fmt.Sprintf(msgVolume, msgOnlineFailed, c.volume.Name, ": "+err.Error()))
	}
}

// expandVolume performs one expansion of c's volume for pod: the plan
// (planExpansion), the claim marked in progress, NodeExpandVolume, the
// events, the claim's status written, and (online) the size on the node.
// pvc is the claim as read just now; onNode the size the node knows.
func (m *Manager) expandVolume(ctx context.Context, pod *corev1.Pod, c *claimed, pvc *corev1.PersistentVolumeClaim, onNode resource.Quantity, atMount bool) error {
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", c.volume.Name)
	plan := planExpansion(expandInputs{PV: c.volume, PVC: pvc, OnNode: onNode, ReadOnly: c.readOnly, FailedFinal: c.expandFailedFinal})
	switch plan.Step {
	case expandReadOnly:
		msg := fmt.Sprintf(msgVolume, msgExpandFailed, c.volume.Name, msgReadOnly)
		m.podEvent(pod, corev1.EventTypeWarning, reasonFileSystemResizeFailed, msg)
		m.claimEvent(pvc, corev1.EventTypeWarning, reasonFileSystemResizeFailed, msg)
		fallthrough
	case expandDone:
		if !atMount {
			c.size = plan.NewSize
		}
		return nil
	case expandWait:
		log.V(3).Info("Waiting for the resize controller to ask for the volume's node expansion",
			"resizeStatus", pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage])
		return nil
	}
	if plan.MarkInProgress {
		updated, err := m.patchClaim(ctx, pvc, claimInProgress(pvc), true)
		if err != nil {
			return err
		}
		pvc = updated
	}
	err := m.cfg.Expander.Expand(ctx, pod, persistentCSI(c), csi.Expansion{NewSize: plan.NewSize, Secret: c.volume.Spec.CSI.NodeExpandSecretRef, AtMount: atMount})
	out := expansionOutcome(plan, storageOf(pvc.Status.Capacity), resultOf(err))
	c.expandFailedFinal = c.expandFailedFinal || out.FinalError
	c.expandInUse = c.expandInUse || out.InUse
	if out.Succeeded {
		msg := fmt.Sprintf(msgVolume, msgExpandSucceeded, c.volume.Name, pod.Spec.NodeName)
		m.podEvent(pod, corev1.EventTypeNormal, reasonFileSystemResizeSuccess, msg)
		m.claimEvent(pvc, corev1.EventTypeNormal, reasonFileSystemResizeSuccess, msg)
		log.Info("Expanded the volume on the node", "size", plan.NewSize.String())
	}
	switch out.Write {
	case writeFinished:
		if _, werr := m.patchClaim(ctx, pvc, claimResized(pvc, plan.NewSize), true); werr != nil {
			if plan.Recovery {
				return fmt.Errorf(msgUpdateRecovery, werr)
			}
			return fmt.Errorf(msgUpdateLegacy, werr)
		}
	case writeFailed, writeInfeasible:
		failed := claimExpandFailed(pvc, err, out.Write == writeInfeasible, m.cfg.Clock.Now())
		if _, werr := m.patchClaim(ctx, pvc, failed, false); werr != nil {
			log.Error(werr, "Cannot mark the claim's node expansion failed")
		}
	}
	if out.Fail {
		return err
	}
	if !out.Finished {
		log.Error(err, "The driver cannot expand the volume while it is in use")
	}
	if out.Finished && !atMount {
		c.size = plan.NewSize
	}
	return nil
}

// resultOf is how csi.Mounter.Expand went.
func resultOf(err error) expandResult {
	if err == nil {
		return resultOK
	}
	switch csi.FailureOf(err) {
	case csi.ExpandTransient:
		return resultTransient
	case csi.ExpandNotSupported:
		return resultNotSupported
	case csi.ExpandInUse:
		return resultInUse
	case csi.ExpandInfeasible:
		return resultInfeasible
	}
	return resultFailed
}

// patchClaim writes the status of a claim from old to updated
// (upstream's PatchPVCStatus, with checkVersion the resourceVersion
// check).
func (m *Manager) patchClaim(ctx context.Context, old, updated *corev1.PersistentVolumeClaim, checkVersion bool) (*corev1.PersistentVolumeClaim, error) {
	patch, err := claimStatusPatch(old, updated, checkVersion)
	if err != nil {
		return old, fmt.Errorf(msgPatchPVC, old.Name, err)
	}
	out, err := m.cfg.Client.CoreV1().PersistentVolumeClaims(old.Namespace).Patch(ctx, old.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return old, fmt.Errorf(msgPatchPVC, old.Name, err)
	}
	return out, nil
}

func (m *Manager) podEvent(pod *corev1.Pod, eventType, reason, msg string) {
	if m.cfg.Recorder != nil {
		m.cfg.Recorder.Eventf(pod, eventType, reason, "%s", msg)
	}
}

func (m *Manager) claimEvent(pvc *corev1.PersistentVolumeClaim, eventType, reason, msg string) {
	if m.cfg.ClaimRecorder != nil {
		m.cfg.ClaimRecorder.ClaimEventf(pvc, eventType, reason, "%s", msg)
	}
}

// isVolumeError reports whether err carries its whole event message, and
// the event's reason ("" FailedMount).
func isVolumeError(err error) (msg, reason string, ok bool) {
	var e *volumeError
	if errors.As(err, &e) {
		return e.msg, e.reason, true
	}
	return "", "", false
}
