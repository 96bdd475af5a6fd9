package simdriver

import (
	"errors"
	"path/filepath"
	"sync"
)

// Mounter is a simulated node's volume mounter (the volume manager's
// Mounter): it bookkeeps the mounts it is asked for and mounts nothing,
// so the volume manager's writes land in the plain directories under the
// node's root. NFS and bind mounts (persistent volumes) are refused: a
// simulated node has nothing to mount them from.
//
// Safe for concurrent use; mu guards mounted.
type Mounter struct {
	mu      sync.Mutex
	mounted map[string]bool
}

// errNotSimulated refuses the mounts a simulated node cannot stand in for.
var errNotSimulated = errors.New("a simulated node mounts no nfs or bind volumes")

func (m *Mounter) record(target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mounted == nil {
		m.mounted = map[string]bool{}
	}
	m.mounted[filepath.Clean(target)] = true
	return nil
}

// MountTmpfs records a tmpfs on target.
func (m *Mounter) MountTmpfs(target string, _ int64) error { return m.record(target) }

// MountHugetlbfs records a hugetlbfs on target.
func (m *Mounter) MountHugetlbfs(target, _ string) error { return m.record(target) }

// MountNFS is refused.
func (m *Mounter) MountNFS(string, string, []string) error { return errNotSimulated }

// FormatAndMount is refused: a simulated node has no devices.
func (m *Mounter) FormatAndMount(string, string, string, []string) error { return errNotSimulated }

// BindMount is refused.
func (m *Mounter) BindMount(string, string, bool) error { return errNotSimulated }

// Unmount forgets the mount on target.
func (m *Mounter) Unmount(target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mounted, filepath.Clean(target))
	return nil
}

// IsMountPoint reports whether a mount was recorded on path.
func (m *Mounter) IsMountPoint(path string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mounted[filepath.Clean(path)], nil
}

// MountSource is "": a simulated mount (tmpfs only) has no device.
func (m *Mounter) MountSource(string) (string, error) { return "", nil }
