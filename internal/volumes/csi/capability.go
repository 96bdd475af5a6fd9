package csi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// What the node tells a driver about a volume, and what it does itself,
// decided from the volume, the pod, the CSIDriver object and the driver's
// node capabilities, as upstream's csi_mounter.go and csi_client.go
// decide it; upstream_test.go pins the names and messages. Pure.

// Upstream's messages (supportsVolumeLifecycleMode, getFSGroupPolicy,
// verifyAttachmentStatus); upstream_test.go pins them.
const (
	msgModeNoCSIDriver = "volume mode %q not supported by driver %s (no CSIDriver object)"
	msgModeUnsupported = "volume mode %q not supported by driver %s (only supports %q)"
	msgNoFSGroupPolicy = "expected valid fsGroupPolicy, received nil value or empty string"
	msgAttachDeleting  = "volume attachment is being deleted"
)

// The volume context keys of the pod's information (upstream's
// getPodInfoAttrs) and of its service account's tokens (upstream's
// podServiceAccountTokenAttrs).
const (
	keyPodName        = "csi.storage.k8s.io/pod.name"
	keyPodNamespace   = "csi.storage.k8s.io/pod.namespace"
	keyPodUID         = "csi.storage.k8s.io/pod.uid"
	keyServiceAccount = "csi.storage.k8s.io/serviceAccount.name"
	keyEphemeral      = "csi.storage.k8s.io/ephemeral"
	keyTokens         = "csi.storage.k8s.io/serviceAccount.tokens"
)

// driverPolicy is what a CSIDriver object says about its driver's
// volumes, with upstream's answers when there is no object.
type driverPolicy struct {
	// Exists is whether there is a CSIDriver object.
	Exists bool
	// AttachRequired: a persistent volume is published only once its
	// VolumeAttachment is attached (unless attachRequired is false).
	AttachRequired bool
	// PodInfoOnMount: the pod's information goes in the volume context.
	PodInfoOnMount bool
	// FSGroupPolicy as the object has it ("" when unset).
	FSGroupPolicy storagev1.FSGroupPolicy
	// Modes are the volume lifecycle modes the driver supports.
	Modes []storagev1.VolumeLifecycleMode
	// TokenRequests are the service account tokens the driver is given;
	// TokensInSecrets puts them in the secrets instead of the volume
	// context.
	TokenRequests   []storagev1.TokenRequest
	TokensInSecrets bool
	// RequiresRepublish: the driver wants NodePublishVolume again from
	// time to time (to refresh the tokens, say).
	RequiresRepublish bool
}

// policyOf reads a CSIDriver object (nil when there is none): no object
// is upstream's defaults (attach required, no pod information, the
// ReadWriteOnceWithFSType policy, persistent volumes only, no republish);
// an object's unset attachRequired is true and its unset podInfoOnMount
// and requiresRepublish false, as upstream reads them.
func policyOf(d *storagev1.CSIDriver) driverPolicy {
	if d == nil {
		return driverPolicy{AttachRequired: true, FSGroupPolicy: storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy,
			Modes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}
	}
	p := driverPolicy{
		Exists:          true,
		AttachRequired:  d.Spec.AttachRequired == nil || *d.Spec.AttachRequired,
		PodInfoOnMount:  d.Spec.PodInfoOnMount != nil && *d.Spec.PodInfoOnMount,
		Modes:           slices.Clone(d.Spec.VolumeLifecycleModes),
		TokenRequests:   slices.Clone(d.Spec.TokenRequests),
		TokensInSecrets: d.Spec.ServiceAccountTokenInSecrets != nil && *d.Spec.ServiceAccountTokenInSecrets,
		// Upstream's RequiresRemount dereferences it: the API server
		// always defaults it.
		RequiresRepublish: d.Spec.RequiresRepublish != nil && *d.Spec.RequiresRepublish,
	}
	if d.Spec.FSGroupPolicy != nil {
		p.FSGroupPolicy = *d.Spec.FSGroupPolicy
	}
	return p
}

// lifecycleMode is a volume's lifecycle mode: Ephemeral for an inline
// volume, Persistent for a PersistentVolume's.
func lifecycleMode(inline bool) storagev1.VolumeLifecycleMode {
	if inline {
		return storagev1.VolumeLifecycleEphemeral
	}
	return storagev1.VolumeLifecyclePersistent
}

// checkLifecycle refuses a volume of a mode the driver does not support
// (upstream's supportsVolumeLifecycleMode): without a CSIDriver object
// only persistent volumes are.
func checkLifecycle(p driverPolicy, driver string, mode storagev1.VolumeLifecycleMode) error {
	switch {
	case !p.Exists && mode == storagev1.VolumeLifecyclePersistent:
		return nil
	case !p.Exists:
		return fmt.Errorf(msgModeNoCSIDriver, mode, driver)
	case slices.Contains(p.Modes, mode):
		return nil
	default:
		return fmt.Errorf(msgModeUnsupported, mode, driver, p.Modes)
	}
}

// fsGroupPolicy is the driver's fsGroup policy; a CSIDriver object
// without one is upstream's error.
func fsGroupPolicy(p driverPolicy) (storagev1.FSGroupPolicy, error) {
	if p.FSGroupPolicy == "" {
		return storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, errors.New(logf(msgNoFSGroupPolicy))
	}
	return p.FSGroupPolicy, nil
}

// fsGroupInputs is what decides whether the kubelet applies a pod's
// fsGroup to a published volume.
type fsGroupInputs struct {
	Policy   storagev1.FSGroupPolicy
	FSGroup  *int64 // the pod's
	ReadOnly bool
	FSType   string
	Inline   bool
	// AccessModes are the PersistentVolume's.
	AccessModes []corev1.PersistentVolumeAccessMode
	// MountGroup: the driver has VOLUME_MOUNT_GROUP, and so applies the
	// fsGroup itself.
	MountGroup bool
}

// applyFSGroup reports whether the kubelet applies the pod's fsGroup to
// the volume (upstream's SetUpAt over supportsFSGroup): never when the
// driver does it (VOLUME_MOUNT_GROUP), the pod has none, the policy is
// None or the volume is read-only; always under the File policy; under
// ReadWriteOnceWithFSType only with an fsType, for an inline volume
// (always published ReadWriteOnce) or a PersistentVolume with the
// ReadWriteOnce or ReadWriteOncePod access mode.
func applyFSGroup(in fsGroupInputs) bool {
	switch {
	case in.MountGroup, in.FSGroup == nil, in.Policy == storagev1.NoneFSGroupPolicy, in.ReadOnly:
		return false
	case in.Policy == storagev1.FileFSGroupPolicy:
		return true
	case in.FSType == "":
		return false
	case in.Inline:
		return true
	}
	return slices.Contains(in.AccessModes, corev1.ReadWriteOnce) || slices.Contains(in.AccessModes, corev1.ReadWriteOncePod)
}

// accessMode is the CSI access mode of a volume of the PersistentVolume
// access modes modes: the first of them, ReadWriteOnce when there are
// none (an inline volume), mapped as upstream's asCSIAccessModeV1, or
// asSingleNodeMultiWriterCapableCSIAccessModeV1 when the driver has the
// SINGLE_NODE_MULTI_WRITER capability.
func accessMode(modes []corev1.PersistentVolumeAccessMode, multiWriter bool) csipb.VolumeCapability_AccessMode_Mode {
	am := corev1.ReadWriteOnce
	if len(modes) > 0 {
		am = modes[0]
	}
	switch am {
	case corev1.ReadWriteOnce:
		if multiWriter {
			return csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER
		}
		return csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	case corev1.ReadOnlyMany:
		return csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	case corev1.ReadWriteMany:
		return csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	case corev1.ReadWriteOncePod:
		if multiWriter {
			return csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
		}
		return csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	}
	return csipb.VolumeCapability_AccessMode_UNKNOWN
}

// mountCapability is the capability of a filesystem volume in
// NodeStageVolume and NodePublishVolume: mounted with fsType and flags,
// in mode, and with the volume mount group when group is set.
func mountCapability(fsType string, flags []string, mode csipb.VolumeCapability_AccessMode_Mode, group *int64) *csipb.VolumeCapability {
	mount := &csipb.VolumeCapability_MountVolume{FsType: fsType, MountFlags: slices.Clone(flags)}
	if group != nil {
		mount.VolumeMountGroup = strconv.FormatInt(*group, 10)
	}
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: mount},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

// blockCapability is the capability of a block volume in
// NodeStageVolume and NodePublishVolume (upstream's fsTypeBlockName): the
// Block access type, no filesystem, flags or mount group.
func blockCapability(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

// mountGroup is the volume mount group a driver is given: the pod's
// fsGroup when the driver has VOLUME_MOUNT_GROUP.
func mountGroup(caps NodeCapabilities, pod *corev1.Pod) *int64 {
	if !caps.VolumeMountGroup || pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.FSGroup == nil {
		return nil
	}
	g := *pod.Spec.SecurityContext.FSGroup
	return &g
}

// podFSGroup is the pod's fsGroup, nil when it has none.
func podFSGroup(pod *corev1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// podInfo is the pod's information in the volume context of a driver
// with podInfoOnMount (upstream's getPodInfoAttrs).
func podInfo(pod *corev1.Pod, mode storagev1.VolumeLifecycleMode) map[string]string {
	return map[string]string{
		keyPodName:        pod.Name,
		keyPodNamespace:   pod.Namespace,
		keyPodUID:         string(pod.UID),
		keyServiceAccount: pod.Spec.ServiceAccountName,
		keyEphemeral:      strconv.FormatBool(mode == storagev1.VolumeLifecycleEphemeral),
	}
}

// tokenRequest is the TokenRequest of a CSIDriver's token request for the
// pod: bound to the pod, for the audience (none when it is empty), valid
// as long as asked.
func tokenRequest(pod *corev1.Pod, r storagev1.TokenRequest) *authenticationv1.TokenRequest {
	audiences := []string{}
	if r.Audience != "" {
		audiences = []string{r.Audience}
	}
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: r.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
}

// tokensAttr is the volume context entry (or secret) of the tokens, a
// JSON object from audience to the TokenRequest's status, as upstream's.
func tokensAttr(tokens map[string]authenticationv1.TokenRequestStatus) (map[string]string, error) {
	data, err := json.Marshal(tokens)
	if err != nil {
		return nil, fmt.Errorf("encode service account tokens: %w", err)
	}
	return map[string]string{keyTokens: string(data)}, nil
}

// merged returns a copy of a with b's entries added (upstream's mergeMap,
// without changing a).
func merged(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// attachmentStatus reports whether a VolumeAttachment says its volume is
// attached, and the error to stop waiting with (upstream's
// verifyAttachmentStatus): the attachment is being deleted, or its
// attacher reported an attach error.
func attachmentStatus(va *storagev1.VolumeAttachment) (bool, error) {
	switch {
	case va.DeletionTimestamp != nil:
		return false, errors.New(msgAttachDeleting)
	case va.Status.Attached:
		return true, nil
	case va.Status.AttachError != nil:
		return false, errors.New(va.Status.AttachError.Message)
	}
	return false, nil
}
