//go:build !linux

package volume

import "errors"

// SysMounter mounts nothing outside Linux.
type SysMounter struct {
	// MounterPath is the mount(8) binary nfs volumes are mounted with
	// (--experimental-mounter-path); "" finds mount in PATH.
	MounterPath string
}

var _ Mounter = SysMounter{}

var errNotLinux = errors.New("tmpfs and bind-mounted volumes need Linux")

// BindMount implements Mounter.
func (SysMounter) BindMount(string, string, bool) error { return errNotLinux }

// MountTmpfs implements Mounter.
func (SysMounter) MountTmpfs(string, int64) error { return errNotLinux }

// MountHugetlbfs implements Mounter.
func (SysMounter) MountHugetlbfs(string, string) error { return errNotLinux }

// MountNFS implements Mounter.
func (SysMounter) MountNFS(string, string, []string) error { return errNotLinux }

// FormatAndMount implements Mounter.
func (SysMounter) FormatAndMount(string, string, string, []string) error { return errNotLinux }

// Unmount implements Mounter.
func (SysMounter) Unmount(string) error { return errNotLinux }

// IsMountPoint implements Mounter.
func (SysMounter) IsMountPoint(string) (bool, error) { return false, nil }

// MountSource implements Mounter.
func (SysMounter) MountSource(string) (string, error) { return "", nil }
