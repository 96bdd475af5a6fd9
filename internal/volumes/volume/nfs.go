package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// nfsPlugin is the plugin directory of nfs volumes below
// PodsDir/<uid>/volumes, as upstream's nfs plugin.
const nfsPlugin = "kubernetes.io~nfs"

// nfsMount is how an nfs volume is mounted: upstream's source
// ("server:/export", an IPv6 server in brackets) and options (the
// PersistentVolume's mountOptions and "ro" when read-only, deduplicated and
// sorted as upstream's JoinMountOptions).
func nfsMount(src *corev1.NFSVolumeSource, readOnly bool, mountOptions []string) (source string, options []string) {
	server := src.Server
	if addr, err := netip.ParseAddr(server); err == nil && addr.Is6() {
		server = "[" + server + "]"
	}
	for _, o := range mountOptions {
		if o != "" {
			options = append(options, o)
		}
	}
	if readOnly {
		options = append(options, "ro")
	}
	slices.Sort(options)
	return server + ":" + src.Path, slices.Compact(options)
}

// setUpNFS mounts an nfs volume (inline, or a claim's PersistentVolume:
// name is the spec's name, the volume's or the PV's) at
// PodsDir/<uid>/volumes/kubernetes.io~nfs/<name> with mount(8), as
// upstream's nfs plugin: the node needs the nfs mount helper
// (mount.nfs, from nfs-common); without it the mount fails saying so. A
// mount that fails leaves no directory behind.
func (m *Manager) setUpNFS(pod *corev1.Pod, name string, src *corev1.NFSVolumeSource, readOnly bool, mountOptions []string) (string, error) {
	if err := checkPVName(name); err != nil {
		return "", err
	}
	dir, mounted, err := m.mountPoint(pod, nfsPlugin, name)
	if err != nil || mounted {
		return dir, err
	}
	source, options := nfsMount(src, readOnly, mountOptions)
	if err := m.cfg.Mounter.MountNFS(source, dir, options); err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// mountPoint makes the directory PodsDir/<uid>/volumes/<plugin>/<name> a
// volume is mounted on, and reports whether it is mounted already.
func (m *Manager) mountPoint(pod *corev1.Pod, plugin, name string) (string, bool, error) {
	dir := filepath.Join(m.cfg.PodsDir, string(pod.UID), "volumes", plugin, name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return "", false, fmt.Errorf("create volume directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", false, fmt.Errorf("create volume directory: %w", err)
	}
	mounted, err := m.cfg.Mounter.IsMountPoint(dir)
	if err != nil {
		return "", false, fmt.Errorf("check mount %q: %w", dir, err)
	}
	return dir, mounted, nil
}
