package volume

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/volumes/csi"
)

// csiPlugin is the plugin directory of CSI volumes below
// PodsDir/<uid>/volumes, as upstream's: each volume's directory holds its
// vol_data.json and the driver's target, mount.
const csiPlugin = "kubernetes.io~csi"

// CSI publishes and unpublishes CSI volumes (csi.Mounter).
type CSI interface {
	SetUp(ctx context.Context, pod *corev1.Pod, v csi.Volume) (csi.Published, error)
	// Republish publishes a published volume again when its driver asks
	// (requiresRepublish), reporting whether it did.
	Republish(ctx context.Context, pod *corev1.Pod, v csi.Volume) (bool, error)
	TearDown(ctx context.Context, target string) error
	// MapBlock makes a persistent volume of volumeMode Block the pod's
	// device and returns its link (csi.DeviceLink); its errors are
	// *csi.MapError. UnmapPodBlocks undoes it for every block volume of
	// a pod, from the disk alone.
	MapBlock(ctx context.Context, pod *corev1.Pod, v csi.Volume) (string, error)
	UnmapPodBlocks(ctx context.Context, podUID types.UID) error
}

// inlineCSI is the csi.Volume of a pod's inline CSI volume.
func inlineCSI(pod *corev1.Pod, v corev1.Volume) csi.Volume {
	src := v.CSI
	out := csi.Volume{
		SpecName: v.Name, Driver: src.Driver, Inline: true, ReadOnly: src.ReadOnly != nil && *src.ReadOnly,
		Attributes: src.VolumeAttributes,
	}
	if src.FSType != nil {
		out.FSType = *src.FSType
	}
	if ref := src.NodePublishSecretRef; ref != nil {
		out.PublishSecret = &corev1.SecretReference{Namespace: pod.Namespace, Name: ref.Name}
	}
	return out
}

// persistentCSI is the csi.Volume of a claim's CSI PersistentVolume; it is
// read-only when the pod's claim asks, as upstream's (the PV's own
// csi.readOnly is the driver's, at staging).
func persistentCSI(c *claimed) csi.Volume {
	pv := c.volume
	src := pv.Spec.CSI
	return csi.Volume{
		SpecName: pv.Name, Driver: src.Driver, Handle: src.VolumeHandle, ReadOnly: c.readOnly,
		FSType: src.FSType, MountOptions: pv.Spec.MountOptions, Attributes: src.VolumeAttributes,
		AccessModes: pv.Spec.AccessModes, StageSecret: src.NodeStageSecretRef, PublishSecret: src.NodePublishSecretRef,
		Block: isBlock(pv),
	}
}

// setUpCSI has the driver publish a CSI volume for pod (staging it first
// when the driver asks) and returns the target. A volume published before
// in this boot of the machine (its marker holds the boot ID) is not
// published again, so a restart of berth publishes nothing twice; after a
// reboot it is. The pod's fsGroup is applied when the driver's
// fsGroupPolicy gives it to the kubelet and the volume is writable;
// then afterPublish (nil: nothing) runs, and its failure fails the
// set-up before the marker is written. On a refresh round a published
// volume is published again if its driver asks (requiresRepublish: fresh
// tokens), as upstream remounts it each sync.
func (m *Manager) setUpCSI(ctx context.Context, pod *corev1.Pod, volName string, v csi.Volume, refresh bool, afterPublish func(context.Context) error) (string, error) {
	if m.cfg.CSI == nil {
		return "", errors.New("CSI volumes need an API server (berth runs standalone)")
	}
	target := csi.TargetDir(m.cfg.PodsDir, pod.UID, v.SpecName)
	marker := readyMarker(m.cfg.PodsDir, pod.UID, volName)
	if published, err := m.publishedThisBoot(marker); err != nil || published {
		if err == nil && refresh {
			_, err = m.cfg.CSI.Republish(ctx, pod, v)
		}
		return target, err
	}
	pub, err := m.cfg.CSI.SetUp(ctx, pod, v)
	if err != nil {
		return "", err
	}
	if fsGroup, onRootMismatch := fsGroupOf(pod); fsGroup != nil && pub.ApplyFSGroup && !v.ReadOnly {
		if err := setOwnershipAt(target, *fsGroup, false, onRootMismatch); err != nil {
			return "", fmt.Errorf("set ownership: %w", err)
		}
	}
	if afterPublish != nil {
		if err := afterPublish(ctx); err != nil {
			return "", err
		}
	}
	if err := writeMarker(marker, m.cfg.BootID); err != nil {
		return "", err
	}
	return target, nil
}

// writeMarker records a publication in boot bootID at marker.
func writeMarker(marker, bootID string) error {
	if err := os.MkdirAll(filepath.Dir(marker), 0o750); err != nil {
		return fmt.Errorf("create ready marker directory: %w", err)
	}
	if err := os.WriteFile(marker, []byte(bootID), 0o600); err != nil {
		return fmt.Errorf("create ready marker %q: %w", marker, err)
	}
	return nil
}

// publishedThisBoot reports whether marker records a publication in this
// boot. Without a boot ID nothing is taken as published.
func (m *Manager) publishedThisBoot(marker string) (bool, error) {
	if m.cfg.BootID == "" {
		return false, nil
	}
	got, err := os.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read ready marker %q: %w", marker, err)
	}
	return bytes.Equal(got, []byte(m.cfg.BootID)), nil
}

// tearDownCSI unpublishes every CSI volume of a pod's volumes directory
// (unstaging what no other pod publishes), before anything below it is
// removed. A CSI volume with no driver to unpublish it keeps the pod's
// directory.
func (m *Manager) tearDownCSI(ctx context.Context, volumesDir string) error {
	dirs, err := filepath.Glob(filepath.Join(volumesDir, csiPlugin, "*"))
	if err != nil || len(dirs) == 0 {
		return err
	}
	if m.cfg.CSI == nil {
		return fmt.Errorf("CSI volume %q: no CSI driver can unpublish it (berth runs standalone)", dirs[0])
	}
	for _, dir := range dirs {
		if err := m.cfg.CSI.TearDown(ctx, filepath.Join(dir, "mount")); err != nil {
			return fmt.Errorf("unpublish CSI volume %q: %w", dir, err)
		}
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove CSI volume directory %q: %w", dir, err)
		}
	}
	return nil
}

// reasonFailedMapVolume is upstream's event reason of a block volume that
// could not be mapped (kubelet events' FailedMapVolume).
const reasonFailedMapVolume = "FailedMapVolume"

// setUpCSIBlock has the driver map a claim's CSI persistent volume of
// volumeMode Block for pod (stage, publish, bind, link:
// csi.Mounter.MapBlock) and returns the pod's link to the device, which
// containers get as the host path of their volumeDevices. As setUpCSI, a
// volume mapped before in this boot of the machine (its marker) is not
// mapped again, so that a restart of berth publishes nothing twice. No
// fsGroup, no SELinux: the device is the container's as it is, as
// upstream. A failure is a FailedMapVolume event worded as upstream's
// ("MapVolume.MapPodDevice failed for volume ..."). Right after the map
// the volume is expanded on the node when its PersistentVolume is larger
// than the claim's status capacity, and on a refresh when it grew, as a
// filesystem volume (expand.go) and as upstream's GenerateMapVolumeFunc
// and GenerateExpandInUseVolumeFunc; a failure at the map fails it
// before the marker is written, so the next set-up maps and expands
// again.
func (m *Manager) setUpCSIBlock(ctx context.Context, pod *corev1.Pod, volName string, c *claimed, refresh bool) (string, error) {
	if m.cfg.CSI == nil {
		return "", errors.New("CSI volumes need an API server (berth runs standalone)")
	}
	v := persistentCSI(c)
	link := csi.DeviceLink(m.cfg.PodsDir, pod.UID, v.SpecName)
	marker := readyMarker(m.cfg.PodsDir, pod.UID, volName)
	if mapped, err := m.publishedThisBoot(marker); err != nil || mapped {
		if err == nil && refresh {
			m.expandOnline(ctx, pod, c)
		}
		return link, err
	}
	got, err := m.cfg.CSI.MapBlock(ctx, pod, v)
	if err != nil {
		op := csi.OpMapPodDevice
		var me *csi.MapError
		if errors.As(err, &me) {
			op, err = me.Op, me.Err
		}
		return "", &volumeError{reason: reasonFailedMapVolume, msg: fmt.Sprintf(msgVolume, op+" failed", v.SpecName, ": "+err.Error())}
	}
	if got != link {
		return "", fmt.Errorf("CSI block volume %q mapped at %q, not at %q", v.SpecName, got, link)
	}
	if err := m.expandAtMount(ctx, pod, c); err != nil {
		return "", err
	}
	if err := writeMarker(marker, m.cfg.BootID); err != nil {
		return "", err
	}
	return link, nil
}

// tearDownCSIBlocks unmaps a pod's CSI block volumes (devicesDir is its
// volumeDevices directory), before the links are removed. Standalone, a
// CSI block volume left from a cluster run keeps the pod's directory.
func (m *Manager) tearDownCSIBlocks(ctx context.Context, uid types.UID, devicesDir string) error {
	if m.cfg.CSI == nil {
		links, err := filepath.Glob(filepath.Join(devicesDir, csiPlugin, "*"))
		if err != nil || len(links) == 0 {
			return err
		}
		return fmt.Errorf("CSI block volume %q: no CSI driver can unmap it (berth runs standalone)", links[0])
	}
	if err := m.cfg.CSI.UnmapPodBlocks(ctx, uid); err != nil {
		return fmt.Errorf("unmap CSI block volumes: %w", err)
	}
	return nil
}
