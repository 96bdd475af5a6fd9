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
	if err := os.MkdirAll(filepath.Dir(marker), 0o750); err != nil {
		return "", fmt.Errorf("create ready marker directory: %w", err)
	}
	if err := os.WriteFile(marker, []byte(m.cfg.BootID), 0o600); err != nil {
		return "", fmt.Errorf("create ready marker %q: %w", marker, err)
	}
	return target, nil
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
