//go:build linux

package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"syscall"
)

// SysMounter mounts with mount(2). Safe for concurrent use.
type SysMounter struct{}

var _ Mounter = SysMounter{}

// MountTmpfs implements Mounter.
func (SysMounter) MountTmpfs(target string, sizeBytes int64) error {
	if err := syscall.Mount("tmpfs", target, "tmpfs", 0, tmpfsOptions(sizeBytes)); err != nil {
		return fmt.Errorf("mount tmpfs on %q: %w", target, err)
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
