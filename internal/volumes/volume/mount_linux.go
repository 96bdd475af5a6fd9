//go:build linux

package volume

import (
	mountutils "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"

	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"syscall"
)

// SysMounter mounts with mount(2). Safe for concurrent use.
type SysMounter struct {
	// MounterPath is the mount(8) binary nfs volumes are mounted with
	// (--experimental-mounter-path); "" finds mount in PATH.
	MounterPath string
}

var _ Mounter = SysMounter{}

// MountTmpfs implements Mounter.
func (SysMounter) MountTmpfs(target string, sizeBytes int64) error {
	if err := syscall.Mount("tmpfs", target, "tmpfs", 0, tmpfsOptions(sizeBytes)); err != nil {
		return fmt.Errorf("mount tmpfs on %q: %w", target, err)
	}
	return nil
}

// MountHugetlbfs implements Mounter, as upstream's (nodev, pagesize=).
func (SysMounter) MountHugetlbfs(target, pageSize string) error {
	if err := syscall.Mount("nodev", target, "hugetlbfs", 0, "pagesize="+pageSize); err != nil {
		return fmt.Errorf("mount hugetlbfs (pagesize %s) on %q: %w", pageSize, target, err)
	}
	return nil
}

// MountNFS implements Mounter with k8s.io/mount-utils, as upstream's nfs
// plugin mounts (mount -t nfs, the options not logged).
func (s SysMounter) MountNFS(source, target string, options []string) error {
	if err := mountutils.New(s.MounterPath).MountSensitiveWithoutSystemd(source, target, "nfs", options, nil); err != nil {
		return fmt.Errorf("mount nfs %s on %q: %w", source, target, err)
	}
	return nil
}

// BindMount implements Mounter: a bind mount, remounted read-only when
// readOnly (a bind mount takes no flags of its own at first).
func (SysMounter) BindMount(source, target string, readOnly bool) error {
	if err := syscall.Mount(source, target, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount %q on %q: %w", source, target, err)
	}
	if !readOnly {
		return nil
	}
	if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		_ = syscall.Unmount(target, 0)
		return fmt.Errorf("remount %q read-only: %w", target, err)
	}
	return nil
}

// FormatAndMount implements Mounter with k8s.io/mount-utils'
// SafeFormatAndMount, as upstream's local-volume plugin mounts a block
// device.
func (s SysMounter) FormatAndMount(device, target, fsType string, options []string) error {
	m := mountutils.NewSafeFormatAndMount(mountutils.New(s.MounterPath), utilexec.New())
	if err := m.FormatAndMount(device, target, fsType, options); err != nil {
		return fmt.Errorf("mount %s (%s) on %q: %w", device, fsType, target, err)
	}
	return nil
}

// Unmount implements Mounter.
func (SysMounter) Unmount(target string) error {
	if err := syscall.Unmount(target, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("unmount %q: %w", target, err)
	}
	return nil
}

// IsMountPoint implements Mounter. The path is resolved first: mountinfo
// lists mount points without symlinks.
func (SysMounter) IsMountPoint(path string) (bool, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resolve %q: %w", path, err)
	}
	path = resolved
	info, err := readMountInfo()
	if err != nil {
		return false, err
	}
	return isMountPointIn(info, path), nil
}

// MountSource implements Mounter, path resolved as IsMountPoint does.
func (SysMounter) MountSource(path string) (string, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", path, err)
	}
	info, err := readMountInfo()
	if err != nil {
		return "", err
	}
	return mountSourceIn(info, resolved), nil
}
