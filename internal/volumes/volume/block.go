package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
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
	link := filepath.Join(m.cfg.PodsDir, string(pod.UID), volumeDevicesDir, localVolumePlugin, pv.Name)
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
