package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The steps of a block volume's set-up, as upstream's operation generator
// names them in its FailedMapVolume events.
const (
	OpSetUpDevice    = "MapVolume.SetUpDevice"
	OpMapPodDevice   = "MapVolume.MapPodDevice"
	OpMapBlockVolume = "MapVolume.MapBlockVolume"
)

// MapError is why MapBlock failed: Op is the step (OpSetUpDevice: the
// stage, OpMapPodDevice: the publish, OpMapBlockVolume: the device
// checked, bound at its global map path and linked in the pod). The
// caller records it as upstream's FailedMapVolume event.
type MapError struct {
	Op  string
	Err error
}

func (e *MapError) Error() string { return e.Op + " failed: " + e.Err.Error() }

func (e *MapError) Unwrap() error { return e.Err }

// MapBlock makes v, a persistent volume of volumeMode Block, available to
// pod as a block device at DeviceLink(PodsDir, pod.UID, v.SpecName), as
// upstream's SetUpDevice, MapPodDevice and MapBlockVolume: its
// vol_data.json saved under the volume's data directory; with
// STAGE_UNSTAGE_VOLUME staged at the block staging path (every time:
// NodeStageVolume is idempotent); published at the pod's publish path
// (a Block capability, the access mode from the PersistentVolume, the
// publish context of its VolumeAttachment when attach is required, the
// pod's information with podInfoOnMount, readOnly, the secrets; no
// fsGroup, no tokens, as upstream); what the driver published there must
// be a block device; it is bind-mounted at the global map path's
// <podUID>, the pod's link made to it and a loop device attached to the
// bind (upstream's fd lock). Errors are *MapError.
func (m *Mounter) MapBlock(ctx context.Context, pod *corev1.Pod, v Volume) (string, error) {
	if pod == nil {
		return "", &MapError{Op: OpMapPodDevice, Err: fmt.Errorf("map CSI block volume %q: no pod", v.SpecName)}
	}
	link, err := m.mapBlock(ctx, pod, v)
	if err != nil {
		var me *MapError
		if !errors.As(err, &me) {
			err = &MapError{Op: OpMapPodDevice, Err: err}
		}
		return "", err
	}
	return link, nil
}

func (m *Mounter) mapBlock(ctx context.Context, pod *corev1.Pod, v Volume) (string, error) {
	if v.Inline {
		return "", errors.New("an inline CSI volume cannot be of volumeMode Block")
	}
	if err := checkBlockNames(pod.UID, v.SpecName, v.Driver); err != nil {
		return "", err
	}
	if v.Handle == "" {
		return "", errors.New("the volume handle is empty")
	}
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", v.SpecName, "driver", v.Driver, "volumeHandle", v.Handle)
	ctx = klog.NewContext(ctx, log)
	s, err := m.open(ctx, v, v.Handle, nil)
	if err != nil {
		return "", err
	}
	defer s.close()
	paths := newBlockPaths(m.cfg.PluginsDir, m.cfg.PodsDir, pod.UID, v.SpecName)
	if err := m.saveBlockData(paths, v); err != nil {
		return "", err
	}
	// The pod's entry at the global map path first: it is what
	// UnmapPodBlocks finds of a pod whose map failed half-way (staged,
	// maybe published), so that its tear-down undoes that too.
	if err := makeMapEntry(paths); err != nil {
		return "", err
	}
	p := publication{pod: pod, v: v, handle: v.Handle, publishContext: s.publishContext, policy: s.policy, caps: s.caps, staging: paths.staging}
	if s.caps.StageUnstageVolume {
		if err := m.stageBlock(ctx, s.client, p); err != nil {
			return "", &MapError{Op: OpSetUpDevice, Err: err}
		}
	}
	if err := m.publishBlock(ctx, s.client, p, paths.publish); err != nil {
		return "", &MapError{Op: OpMapPodDevice, Err: err}
	}
	if err := m.mapDevice(paths); err != nil {
		return "", &MapError{Op: OpMapBlockVolume, Err: err}
	}
	log.V(4).Info("Mapped CSI block volume", "publishPath", paths.publish, "globalMapPath", paths.podMap, "link", paths.link)
	return paths.link, nil
}

// saveBlockData writes the volume's vol_data.json in its data directory,
// with upstream's keys (NewBlockVolumeMapper's).
func (m *Mounter) saveBlockData(paths blockPaths, v Volume) error {
	if err := os.MkdirAll(paths.data, dirMode); err != nil {
		return fmt.Errorf("make the volume's data directory: %w", err)
	}
	return saveVolData(paths.data, map[string]string{
		keySpecVolID:    v.SpecName,
		keyVolumeHandle: v.Handle,
		keyDriverName:   v.Driver,
		keyNodeName:     m.cfg.NodeName,
		keyAttachmentID: attachmentName(v.Handle, v.Driver, m.cfg.NodeName),
	})
}

// stageBlock is upstream's stageVolumeForBlock: the stage secret read,
// the staging directory made, NodeStageVolume called.
func (m *Mounter) stageBlock(ctx context.Context, client *NodeClient, p publication) error {
	secrets, err := m.stageSecrets(ctx, p.v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.staging, dirMode); err != nil {
		return fmt.Errorf("make staging directory: %w", err)
	}
	req := &csipb.NodeStageVolumeRequest{
		VolumeId:          p.handle,
		PublishContext:    p.publishContext,
		StagingTargetPath: p.staging,
		VolumeCapability:  blockCapability(accessMode(p.v.AccessModes, p.caps.SingleNodeMultiWriter)),
		Secrets:           secrets,
		VolumeContext:     p.v.Attributes,
	}
	if err := client.NodeStageVolume(ctx, req); err != nil {
		return driverError("NodeStageVolume", p.staging, err)
	}
	return nil
}

// publishBlock is upstream's publishVolumeForBlock: the publish secret
// read, the pod's information added with podInfoOnMount, the publish
// path's parent made (the driver makes the path), NodePublishVolume
// called with the staging path (as upstream, also when the driver does
// not stage).
func (m *Mounter) publishBlock(ctx context.Context, client *NodeClient, p publication, publish string) error {
	secrets, err := m.publishSecrets(ctx, p.pod, p.v)
	if err != nil {
		return err
	}
	volumeContext := p.v.Attributes
	if p.policy.PodInfoOnMount {
		volumeContext = merged(volumeContext, podInfo(p.pod, lifecycleMode(false)))
	}
	if err := os.MkdirAll(filepath.Dir(publish), dirMode); err != nil {
		return fmt.Errorf("make the publish path's parent directory: %w", err)
	}
	req := &csipb.NodePublishVolumeRequest{
		VolumeId:          p.handle,
		PublishContext:    p.publishContext,
		StagingTargetPath: p.staging,
		TargetPath:        publish,
		VolumeCapability:  blockCapability(accessMode(p.v.AccessModes, p.caps.SingleNodeMultiWriter)),
		Readonly:          p.v.ReadOnly,
		Secrets:           secrets,
		VolumeContext:     volumeContext,
	}
	if err := client.NodePublishVolume(ctx, req); err != nil {
		return driverError("NodePublishVolume", publish, err)
	}
	return nil
}

// mapDevice is upstream's MapBlockVolume: the published path must be a
// block device (the driver's symlink to one followed, as upstream's
// EvalHostSymlinks); it is bind-mounted at the global map path's
// <podUID>, the pod's link made to it, and a loop device attached to the
// global map path's entry to keep the device open (loop.go).
func (m *Mounter) mapDevice(paths blockPaths) error {
	block, err := m.block.IsBlockDevice(paths.publish)
	if err != nil {
		return fmt.Errorf("the CSI driver published no device at %q: %w", paths.publish, err)
	}
	if !block {
		return fmt.Errorf("the CSI driver published %q, which is not a block device", paths.publish)
	}
	mapped, err := m.mounted(paths.podMap)
	if err != nil {
		return err
	}
	if !mapped {
		if err := m.block.BindMount(paths.publish, paths.podMap); err != nil {
			return fmt.Errorf("bind %q at %q: %w", paths.publish, paths.podMap, err)
		}
	}
	if err := makeLink(paths.publish, paths.link); err != nil {
		return err
	}
	return m.block.AttachLoop(paths.podMap)
}

// makeMapEntry makes the pod's entry at the global map path, an empty
// file the published device is bound at, unless it is there.
func makeMapEntry(paths blockPaths) error {
	if err := os.MkdirAll(paths.globalMap, dirMode); err != nil {
		return fmt.Errorf("make the global map path: %w", err)
	}
	f, err := os.OpenFile(paths.podMap, os.O_CREATE|os.O_RDONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("make the global map path's entry: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("make the global map path's entry: %w", err)
	}
	return nil
}

// makeLink makes link a symlink to target, replacing a link to
// elsewhere.
func makeLink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), dirMode); err != nil {
		return fmt.Errorf("make the pod's volume device directory: %w", err)
	}
	if got, err := os.Readlink(link); err == nil && got == target {
		return nil
	}
	if err := removeLink(link); err != nil {
		return err
	}
	if err := os.Symlink(target, link); err != nil {
		return fmt.Errorf("link the volume device: %w", err)
	}
	return nil
}

// removeLink removes the symlink link if it is there; anything else in
// its place is an error and stays.
func removeLink(link string) error {
	info, err := os.Lstat(link)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove volume device link %q: %w", link, err)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("remove volume device link %q: not a symlink (mode %v)", link, info.Mode())
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove volume device link %q: %w", link, err)
	}
	return nil
}

// isBlockDevice reports whether path, a symlink followed, is a block
// device.
func isBlockDevice(path string) (bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return info.Mode()&fs.ModeDevice != 0 && info.Mode()&fs.ModeCharDevice == 0, nil
}
