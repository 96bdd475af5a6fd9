//go:build !linux

package volume

import "errors"

// SysMounter mounts nothing outside Linux.
type SysMounter struct{}

var _ Mounter = SysMounter{}

var errNotLinux = errors.New("tmpfs and bind-mounted volumes need Linux")

// BindMount implements Mounter.
func (SysMounter) BindMount(string, string, bool) error { return errNotLinux }

// MountTmpfs implements Mounter.
func (SysMounter) MountTmpfs(string, int64) error { return errNotLinux }

// MountHugetlbfs implements Mounter.
func (SysMounter) MountHugetlbfs(string, string) error { return errNotLinux }

// Unmount implements Mounter.
func (SysMounter) Unmount(string) error { return errNotLinux }

// IsMountPoint implements Mounter.
func (SysMounter) IsMountPoint(string) (bool, error) { return false, nil }
