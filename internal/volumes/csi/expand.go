package csi

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Upstream's messages (pkg/volume/csi expander.go nodeExpandWithClient);
// upstream_expand_test.go pins them.
const (
	msgExpandCaps       = "Expander.NodeExpand failed to check if node supports expansion : %w"
	msgExpandNotSupport = "NodeExpand is not supported by the CSI driver %s"
	msgExpandSecret     = "expander.NodeExpand failed to get NodeExpandSecretRef %s/%s: %w"
	msgExpandFailed     = "Expander.NodeExpand failed to expand the volume : %w"
	msgExpandInfeasible = "Expander.NodeExpand failed to expand the volume %s"
)

// ExpandFailure says what a failed Expand means for the resize of the
// volume, as upstream's NodeExpand classifies its errors (the types of
// pkg/volume/util/types).
type ExpandFailure int

const (
	// ExpandFailed is a final failure (upstream: IsOperationFinishedError;
	// every failure that is none of the others, a driver's timeout
	// included: upstream wraps its UncertainProgressError, and the
	// wrapped error counts as final).
	ExpandFailed ExpandFailure = iota
	// ExpandTransient: the driver is not registered, the call was not
	// made (upstream's TransientOperationFailure).
	ExpandTransient
	// ExpandNotSupported: the driver has no EXPAND_VOLUME node
	// capability (upstream's OperationNotSupportedError).
	ExpandNotSupported
	// ExpandInUse: the driver answered FailedPrecondition, it cannot
	// expand the volume while it is in use (upstream's
	// FailedPreconditionError). Final too.
	ExpandInUse
	// ExpandInfeasible: the driver answered InvalidArgument, OutOfRange or
	// NotFound (upstream's InfeasibleError). Final too.
	ExpandInfeasible
)

// ExpandError is a failed Expand and its classification.
type ExpandError struct {
	Failure ExpandFailure
	Err     error
}

func (e *ExpandError) Error() string { return e.Err.Error() }
func (e *ExpandError) Unwrap() error { return e.Err }

// FailureOf returns how err, an error of Expand, failed: ExpandFailed
// for an error that is no ExpandError.
func FailureOf(err error) ExpandFailure {
	var e *ExpandError
	if errors.As(err, &e) {
		return e.Failure
	}
	return ExpandFailed
}

// Expansion is what Expand asks a driver for.
type Expansion struct {
	// NewSize is the capacity the volume must have.
	NewSize resource.Quantity
	// Secret is the PersistentVolume's csi.nodeExpandSecretRef (nil:
	// none), the secret the driver is given.
	Secret *corev1.SecretReference
	// AtMount: the expansion follows the volume's set-up (upstream's
	// expandVolumeDuringMount), not a growth of a mounted volume
	// (GenerateExpandInUseVolumeFunc). It matters to a block volume of a
	// driver without STAGE_UNSTAGE_VOLUME: right after its map upstream
	// gives no staging path (SetUpDevice staged nothing), online it gives
	// the block staging path all the same (GetStagingPath).
	AtMount bool
}

// Expand has the driver expand a persistent volume published for pod
// (NodeExpandVolume), as upstream's csiPlugin NodeExpand: the driver must
// be registered and have EXPAND_VOLUME; it is given the volume's handle,
// the pod's target as the volume path and the volume's staging directory
// as the staging path (upstream's device mount path, given whether the
// driver stages or not), the new size as the required bytes, the
// capability the volume was published with (no mount group), and the
// expand secret. A block volume (v.Block) is given, as upstream's, the
// device the driver published for the pod (the publish path, its
// symlinks followed: upstream's device path) as the volume path, the
// block staging path (see Expansion.AtMount), and a Block capability.
// An error is an *ExpandError.
func (m *Mounter) Expand(ctx context.Context, pod *corev1.Pod, v Volume, e Expansion) error {
	if pod == nil || v.Inline || v.Handle == "" {
		return &ExpandError{Failure: ExpandFailed, Err: fmt.Errorf("expand CSI volume %q: only the published persistent volume of a pod expands", v.SpecName)}
	}
	check := checkNames
	if v.Block {
		check = checkBlockNames
	}
	if err := check(pod.UID, v.SpecName, v.Driver); err != nil {
		return &ExpandError{Failure: ExpandFailed, Err: fmt.Errorf("expand CSI volume %q: %w", v.SpecName, err)}
	}
	if _, ok := m.cfg.Drivers.Driver(v.Driver); !ok {
		return &ExpandError{Failure: ExpandTransient, Err: fmt.Errorf(msgNoDriver, v.Driver)}
	}
	client, err := m.cfg.Drivers.Dial(v.Driver)
	if err != nil {
		return &ExpandError{Failure: ExpandTransient, Err: err}
	}
	defer client.Close()
	caps, err := client.NodeGetCapabilities(ctx)
	if err != nil {
		return &ExpandError{Failure: ExpandFailed, Err: fmt.Errorf(msgExpandCaps, err)}
	}
	if !caps.ExpandVolume {
		return &ExpandError{Failure: ExpandNotSupported, Err: fmt.Errorf(msgExpandNotSupport, v.Driver)}
	}
	var secrets map[string]string
	if ref := e.Secret; ref != nil {
		if secrets, err = m.secret(ctx, *ref); err != nil {
			return &ExpandError{Failure: ExpandFailed, Err: fmt.Errorf(msgExpandSecret, ref.Namespace, ref.Name, err)}
		}
	}
	unlock, err := m.locks.lock(ctx, uniqueName(v.Driver, v.Handle))
	if err != nil {
		return &ExpandError{Failure: ExpandTransient, Err: err}
	}
	defer unlock()
	req := expandRequest(m.cfg, pod, v, caps, e.NewSize, secrets)
	if v.Block {
		req, err = blockExpandRequest(m.cfg, pod, v, caps, e, secrets)
	}
	if err != nil {
		return &ExpandError{Failure: ExpandFailed, Err: err}
	}
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", v.SpecName, "driver", v.Driver, "volumeHandle", v.Handle)
	if _, err := client.NodeExpandVolume(ctx, req); err != nil {
		log.V(2).Info("NodeExpandVolume failed", "err", err)
		return expandError(err)
	}
	log.V(4).Info("Expanded CSI volume", "requiredBytes", req.GetCapacityRange().GetRequiredBytes())
	return nil
}

// expandRequest is the NodeExpandVolume request of a published volume
// (upstream's csiDriverClient NodeExpandVolume): upstream's access mode
// mapping by SINGLE_NODE_MULTI_WRITER, a mount capability with the
// volume's fsType and mount options.
func expandRequest(cfg MounterConfig, pod *corev1.Pod, v Volume, caps NodeCapabilities, size resource.Quantity, secrets map[string]string) *csipb.NodeExpandVolumeRequest {
	return &csipb.NodeExpandVolumeRequest{
		VolumeId:          v.Handle,
		VolumePath:        TargetDir(cfg.PodsDir, pod.UID, v.SpecName),
		StagingTargetPath: stagingDir(cfg.PluginsDir, v.Driver, v.Handle),
		CapacityRange:     &csipb.CapacityRange{RequiredBytes: size.Value()},
		VolumeCapability:  mountCapability(v.FSType, v.MountOptions, accessMode(v.AccessModes, caps.SingleNodeMultiWriter), nil),
		Secrets:           secrets,
	}
}

// blockExpandRequest is the NodeExpandVolume request of a mapped block
// volume (upstream's nodeExpandWithClient for a volume that is no
// filesystem): the device published for the pod as the volume path (the
// publish path with its symlinks followed, as upstream's device path is
// EvalHostSymlinks of what MapPodDevice returned), the block staging
// path (none right after the map when the driver does not stage), a
// Block capability with upstream's access mode mapping.
func blockExpandRequest(cfg MounterConfig, pod *corev1.Pod, v Volume, caps NodeCapabilities, e Expansion, secrets map[string]string) (*csipb.NodeExpandVolumeRequest, error) {
	paths := newBlockPaths(cfg.PluginsDir, cfg.PodsDir, pod.UID, v.SpecName)
	device, err := filepath.EvalSymlinks(paths.publish)
	if err != nil {
		return nil, fmt.Errorf("expand CSI block volume %q: the device published at %q: %w", v.SpecName, paths.publish, err)
	}
	staging := paths.staging
	if e.AtMount && !caps.StageUnstageVolume {
		staging = ""
	}
	return &csipb.NodeExpandVolumeRequest{
		VolumeId:          v.Handle,
		VolumePath:        device,
		StagingTargetPath: staging,
		CapacityRange:     &csipb.CapacityRange{RequiredBytes: e.NewSize.Value()},
		VolumeCapability:  blockCapability(accessMode(v.AccessModes, caps.SingleNodeMultiWriter)),
		Secrets:           secrets,
	}, nil
}

// expandError classifies a failed NodeExpandVolume as upstream's
// nodeExpandWithClient: FailedPrecondition is the volume in use;
// InvalidArgument, OutOfRange and NotFound are infeasible
// (isInfeasibleError); anything else is a final failure.
func expandError(err error) error {
	st, ok := status.FromError(err)
	if ok {
		switch st.Code() {
		case codes.FailedPrecondition:
			return &ExpandError{Failure: ExpandInUse, Err: fmt.Errorf(msgExpandFailed, err)}
		case codes.InvalidArgument, codes.OutOfRange, codes.NotFound:
			return &ExpandError{Failure: ExpandInfeasible, Err: fmt.Errorf(msgExpandInfeasible, err.Error())}
		}
	}
	return &ExpandError{Failure: ExpandFailed, Err: fmt.Errorf(msgExpandFailed, err)}
}
