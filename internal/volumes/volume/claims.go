package volume

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/berthk8s/berth/internal/volumes/transient"
)

// pvcProtectionFinalizer is the finalizer of a claim in use
// (kubernetes.io/pvc-protection): a claim being deleted that still has it
// is in use by some pod and may still be mounted.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// Upstream's messages (the volume manager's desired-state populator);
// upstream_test.go pins them.
const (
	msgProcessingPVC = "error processing PVC %s/%s: %w"
	msgPVCDeleted    = "PVC is being deleted"
	msgPVCNotBound   = "PVC is not bound"
	msgPVCNoVolume   = "PVC has empty pvc.Spec.VolumeName"
	msgFetchPVC      = "failed to fetch PVC from API server: %w"
	msgFetchPV       = "failed to fetch PV %s from API server: %w"
	msgPVNotBound    = "found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim"
	msgPVOtherClaim  = "found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s"
	msgModeInMounts  = "volume %s has volumeMode %s, but is specified in volumeMounts"
	msgModeInDevices = "volume %s has volumeMode %s, but is specified in volumeDevices"
)

// claimName returns the claim a persistentVolumeClaim or generic ephemeral
// volume uses (ephemeral: <pod>-<volume>, as upstream), whether the volume
// is ephemeral, and whether the pod's spec asks for it read-only.
func claimName(pod *corev1.Pod, v corev1.Volume) (name string, isEphemeral, readOnly bool) {
	if c := v.PersistentVolumeClaim; c != nil {
		return c.ClaimName, false, c.ReadOnly
	}
	return ephemeral.VolumeClaimName(pod, &v), true, false
}

// claimed is a claim resolved to the persistent volume bound to it.
type claimed struct {
	claim *corev1.PersistentVolumeClaim
	// volume is the bound persistent volume, in its CSI form when its
	// in-tree source is migrated (migratePV).
	volume   *corev1.PersistentVolume
	readOnly bool // the pod's volume asks for it read-only
	// size is the volume's size on the node (resize.go): the claim's
	// status capacity when resolved, the size it was expanded to since.
	size resource.Quantity
	// expandInUse: the driver cannot expand the volume while the pod
	// has it; expandFailedFinal: an expansion failed with a final error.
	expandInUse, expandFailedFinal bool
}

// checkClaim decides whether a claim can be used now, with upstream's
// messages (the volume manager's populator): a claim being deleted and no
// longer protected, not bound, or bound to no volume is refused. An
// ephemeral volume's claim must also be the pod's (ephemeral.VolumeIsForPod).
func checkClaim(pvc *corev1.PersistentVolumeClaim) error {
	if pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, pvcProtectionFinalizer) {
		return errors.New(msgPVCDeleted)
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return errors.New(msgPVCNotBound)
	}
	if pvc.Spec.VolumeName == "" {
		return errors.New(msgPVCNoVolume)
	}
	return nil
}

// checkBinding decides whether pv is the volume bound to pvc: its claimRef
// must name the claim's UID, as upstream checks.
func checkBinding(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) error {
	if pv.Spec.ClaimRef == nil {
		return fmt.Errorf(msgPVNotBound, pv.Name)
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return fmt.Errorf(msgPVOtherClaim, pv.Name, pv.Spec.ClaimRef.UID, pvc.UID)
	}
	return nil
}

// checkVolumeMode refuses a volume whose mode does not match how the pod
// uses it, with upstream's message: a Block volume in volumeMounts, a
// Filesystem one in volumeDevices.
func checkVolumeMode(pod *corev1.Pod, name string, pv *corev1.PersistentVolume) error {
	mode := corev1.PersistentVolumeFilesystem
	if pv.Spec.VolumeMode != nil {
		mode = *pv.Spec.VolumeMode
	}
	mounted, device := usesVolume(pod, name)
	if mounted && mode != corev1.PersistentVolumeFilesystem {
		return fmt.Errorf(msgModeInMounts, name, mode)
	}
	if device && mode != corev1.PersistentVolumeBlock {
		return fmt.Errorf(msgModeInDevices, name, mode)
	}
	return nil
}

// usesVolume reports whether a container of pod (init, regular or
// ephemeral) mounts the volume name, or uses it as a device.
func usesVolume(pod *corev1.Pod, name string) (mounted, device bool) {
	visitVolumeUses(pod, func(mounts []corev1.VolumeMount, devices []corev1.VolumeDevice) {
		mounted = mounted || slices.ContainsFunc(mounts, func(m corev1.VolumeMount) bool { return m.Name == name })
		device = device || slices.ContainsFunc(devices, func(d corev1.VolumeDevice) bool { return d.Name == name })
	})
	return mounted, device
}

// resolveClaim reads the claim of a persistentVolumeClaim or generic
// ephemeral volume and the persistent volume bound to it from the API,
// and checks both. A claim missing or not bound yet (Pending) is a wait
// while the pod is new (waiting). An error is worded as upstream's ("error processing
// PVC <namespace>/<name>: ..."), which FailedMount events show. Reads
// that fail for a reason that clears on its own (the node authorizer not
// knowing the pod yet) are retried as configMap reads are.
func (m *Manager) resolveClaim(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState) (*claimed, error) {
	name, isEphemeral, readOnly := claimName(pod, v)
	fail := func(err error) error { return fmt.Errorf(msgProcessingPVC, pod.Namespace, name, err) }
	if m.cfg.Client == nil {
		return nil, fail(errors.New("claims need an API server (berth runs standalone)"))
	}
	var pvc *corev1.PersistentVolumeClaim
	err := m.retry(ctx, pod, st, "PersistentVolumeClaim "+name, func(ctx context.Context) error {
		var err error
		pvc, err = m.cfg.Client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		// A generic ephemeral volume's claim the ephemeral controller
		// creates after the pod, or a claim created together with it.
		err = m.waiting(st, err)
	}
	if err != nil {
		return nil, fail(fmt.Errorf(msgFetchPVC, err))
	}
	if err := checkClaim(pvc); err != nil {
		if pvc.DeletionTimestamp == nil && pvc.Status.Phase == corev1.ClaimPending {
			// The PV controller or a provisioner binds it (a
			// WaitForFirstConsumer claim once the pod is scheduled).
			err = m.waiting(st, err)
		}
		return nil, fail(err)
	}
	if isEphemeral {
		if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
			return nil, err // upstream's message stands alone
		}
	}
	var pv *corev1.PersistentVolume
	err = m.retry(ctx, pod, st, "PersistentVolume "+pvc.Spec.VolumeName, func(ctx context.Context) error {
		var err error
		pv, err = m.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, fail(fmt.Errorf(msgFetchPV, pvc.Spec.VolumeName, err))
	}
	if err := checkBinding(pv, pvc); err != nil {
		return nil, fail(err)
	}
	if err := checkVolumeMode(pod, v.Name, pv); err != nil {
		return nil, err
	}
	if pv, err = migratePV(ctx, pv); err != nil {
		return nil, fail(err)
	}
	return &claimed{claim: pvc, volume: pv, readOnly: readOnly, size: storageOf(pvc.Status.Capacity)}, nil
}

// waiting marks err, a claim missing or not bound yet, as a wait on the
// cluster (transient.Waiting: the pod worker polls it, as upstream's
// desired-state populator does) while the pod is within
// transient.WaitWindow of being first seen; after that it is a failure
// the pod worker retries at its usual back-off.
func (m *Manager) waiting(st *podState, err error) error {
	if m.cfg.Clock.Now().Sub(st.seen) < transient.WaitWindow {
		return transient.Waiting(err)
	}
	return err
}
