package selinux

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/mount-utils"
)

// Host reads the host's SELinux state from its /proc files; the zero
// value reads the real ones. Safe for concurrent use.
type Host struct {
	// MountInfo is /proc/self/mountinfo; AttrCurrent is
	// /proc/self/attr/current (berth's own label). Empty: the real files.
	MountInfo, AttrCurrent string
}

func (h Host) mountInfo() string   { return cmp.Or(h.MountInfo, "/proc/self/mountinfo") }
func (h Host) attrCurrent() string { return cmp.Or(h.AttrCurrent, "/proc/self/attr/current") }

// Enabled reports whether SELinux is on: false when the files cannot be
// read (no SELinux in the kernel, or no /proc).
func (h Host) Enabled() bool {
	mis, err := mount.ParseMountInfo(h.mountInfo())
	if err != nil {
		return false
	}
	current, err := os.ReadFile(h.attrCurrent())
	if err != nil {
		return false
	}
	return enabled(mis, current)
}

// enabled is go-selinux's GetEnabled on what the host says: a selinuxfs
// is mounted and the process's label is a real one ("kernel" is what a
// kernel without a loaded policy gives). It is pure.
func enabled(mis []mount.MountInfo, current []byte) bool {
	if !slices.ContainsFunc(mis, func(mi mount.MountInfo) bool { return mi.FsType == "selinuxfs" }) {
		return false
	}
	label := string(bytes.TrimRight(current, "\x00\n"))
	return label != "" && label != "kernel"
}

// Supports reports whether the filesystem path is on carries SELinux
// labels, so that the runtime can relabel a volume there for a
// container: false when SELinux is off (Enabled), without reading the
// mount table. An error says the mount table could not be read or path
// is on no mount in it.
func (h Host) Supports(path string) (bool, error) {
	if !h.Enabled() {
		return false, nil
	}
	mis, err := mount.ParseMountInfo(h.mountInfo())
	if err != nil {
		return false, fmt.Errorf("read the mount table: %w", err)
	}
	mi, ok := mountOf(mis, path)
	if !ok {
		return false, fmt.Errorf("find the mount of %s: %w", path, fs.ErrNotExist)
	}
	return slices.Contains(mi.SuperOptions, "seclabel") || slices.Contains(mi.MountOptions, "seclabel"), nil
}

// mountOf is the mount path is on: the last entry (the one on top) with
// the longest mount point that is path or one of its parents. It is pure.
func mountOf(mis []mount.MountInfo, path string) (mount.MountInfo, bool) {
	path = filepath.Clean(path)
	var best mount.MountInfo
	found := false
	for _, mi := range mis {
		if !under(path, mi.MountPoint) || (found && len(mi.MountPoint) < len(best.MountPoint)) {
			continue
		}
		best, found = mi, true
	}
	return best, found
}

// under reports whether path is dir or below it.
func under(path, dir string) bool {
	return dir == "/" || path == dir || strings.HasPrefix(path, dir+"/")
}
