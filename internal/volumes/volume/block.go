package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// volumeDevicesDir is where a pod's block volumes are linked, as upstream:
// PodsDir/<uid>/volumeDevices/<plugin>/<pv name>, a symlink to the device.
const volumeDevicesDir = "volumeDevices"

// isBlock reports whether pv is of volumeMode Block.
func isBlock(pv *corev1.PersistentVolume) bool {
	return pv.Spec.VolumeMode != nil && *pv.Spec.VolumeMode == corev1.PersistentVolumeBlock
}

// setUpLocalBlock links a local persistent volume of volumeMode Block at
// PodsDir/<uid>/volumeDevices/kubernetes.io~local-volume/<pv name> (upstream's
// path) and returns the link, which containers get as a device
// (volumeDevices): the volume's path must be a block device. Nothing is
// mounted, formatted or owned: the device is the container's as it is.
func (m *Manager) setUpLocalBlock(pod *corev1.Pod, c *claimed) (string, error) {
	pv := c.volume
	path, info, err := statLocal(pv)
	if err != nil {
		return "", err
	}
	if info.Mode()&fs.ModeDevice == 0 || info.Mode()&fs.ModeCharDevice != 0 {
		return "", fmt.Errorf("local PersistentVolume %s of volumeMode Block: %q is not a block device", pv.Name, path)
	}
	return linkDevice(filepath.Join(m.cfg.PodsDir, string(pod.UID), volumeDevicesDir, localVolumePlugin, pv.Name), path)
}

// linkDevice makes link a symlink to the block device path (replacing
// one to anything else) and returns it.
func linkDevice(link, path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(link), 0o750); err != nil {
		return "", fmt.Errorf("create volume device directory: %w", err)
	}
	if got, err := os.Readlink(link); err == nil && got == path {
		return link, nil
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("replace volume device link %q: %w", link, err)
	}
	if err := os.Symlink(path, link); err != nil {
		return "", fmt.Errorf("link volume device: %w", err)
	}
	return link, nil
}

// statLocal checks a local persistent volume's name and stats its path.
func statLocal(pv *corev1.PersistentVolume) (string, fs.FileInfo, error) {
	if err := checkPVName(pv.Name); err != nil {
		return "", nil, err
	}
	path := pv.Spec.Local.Path
	info, err := os.Stat(path)
	if err != nil {
		return "", nil, fmt.Errorf("local PersistentVolume %s: %w", pv.Name, err)
	}
	return path, info, nil
}

// checkPVName refuses a persistent volume name that cannot be one path
// element (the API validates names; berth does not rely on it).
func checkPVName(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return fmt.Errorf("local PersistentVolume %q: the name cannot name its mount point", name)
	}
	return nil
}

// localDeviceMount is where the block device of local persistent volume
// pvName is mounted for its pods, as upstream's local-volume plugin:
// PluginsDir/kubernetes.io/local-volume/mounts/<pv name>.
func (m *Manager) localDeviceMount(pvName string) string {
	return filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "local-volume", "mounts", pvName)
}

// mountLocalDevice mounts the block device of a local persistent volume
// of volumeMode Filesystem at localDeviceMount, unless it is mounted
// there already, and returns that directory: as upstream, a device with
// no filesystem is formatted (spec.local.fsType, ext4 when unset), the
// mount is read-only when the claim that first mounts it asks for it,
// and the volume's mountOptions apply. The caller holds localMu.
func (m *Manager) mountLocalDevice(pv *corev1.PersistentVolume, device string, readOnly bool) (string, error) {
	if m.cfg.PluginsDir == "" {
		return "", fmt.Errorf("local PersistentVolume %s: %q is a block device and berth has no plugins directory to mount it in", pv.Name, device)
	}
	target := m.localDeviceMount(pv.Name)
	mounted, err := m.cfg.Mounter.IsMountPoint(target)
	if err != nil {
		return "", fmt.Errorf("check mount %q: %w", target, err)
	}
	if mounted {
		return target, nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return "", fmt.Errorf("create device mount point: %w", err)
	}
	fsType, options := localDeviceMountArgs(pv, readOnly)
	if err := m.cfg.Mounter.FormatAndMount(device, target, fsType, options); err != nil {
		_ = os.Remove(target)
		return "", fmt.Errorf("local PersistentVolume %s: %w", pv.Name, err)
	}
	return target, nil
}

// localDeviceMountArgs are the filesystem type and mount options of a
// local volume's block device, as upstream's: spec.local.fsType or ext4,
// "ro" first when read-only, then the volume's spec.mountOptions.
func localDeviceMountArgs(pv *corev1.PersistentVolume, readOnly bool) (string, []string) {
	fsType := "ext4"
	if t := pv.Spec.Local.FSType; t != nil && *t != "" {
		fsType = *t
	}
	var options []string
	if readOnly {
		options = append(options, "ro")
	}
	return fsType, append(options, pv.Spec.MountOptions...)
}

// releaseLocalDevice unmounts the block device of local persistent
// volume pvName (and removes its mount point) once no pod binds it any
// more; it does nothing for a volume whose device is not mounted (a
// directory volume).
func (m *Manager) releaseLocalDevice(ctx context.Context, pvName string) error {
	if m.cfg.PluginsDir == "" || checkPVName(pvName) != nil {
		return nil
	}
	m.localMu.Lock()
	defer m.localMu.Unlock()
	target := m.localDeviceMount(pvName)
	mounted, err := m.cfg.Mounter.IsMountPoint(target)
	if err != nil || !mounted {
		return err
	}
	binds, err := filepath.Glob(filepath.Join(m.cfg.PodsDir, "*", "volumes", localVolumePlugin, pvName))
	if err != nil {
		return err
	}
	for _, b := range binds {
		if used, err := m.cfg.Mounter.IsMountPoint(b); err != nil || used {
			return err
		}
	}
	if err := m.cfg.Mounter.Unmount(target); err != nil {
		return fmt.Errorf("unmount local volume device %q: %w", target, err)
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove device mount point %q: %w", target, err)
	}
	klog.FromContext(ctx).V(2).Info("Unmounted local volume device", "pv", pvName, "path", target)
	return nil
}
