package volume

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

const (
	rwMask   fs.FileMode = 0o660 // group read-write for writable volumes
	roMask   fs.FileMode = 0o440 // group read for read-only volumes
	execMask fs.FileMode = 0o110 // directories also get search permission
)

// ownershipMode is the mode a file gets under an fsGroup, as upstream's
// SetVolumeOwnership: group read (and write, for writable volumes) added,
// directories also searchable and setgid so new files inherit the group.
func ownershipMode(mode fs.FileMode, isDir, readOnly bool) fs.FileMode {
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	if isDir {
		mask |= os.ModeSetgid | execMask
	}
	return mode | mask
}

// rootNeedsChange reports whether the volume root does not carry the
// fsGroup yet, the test of fsGroupChangePolicy OnRootMismatch.
func rootNeedsChange(gid uint32, mode fs.FileMode, fsGroup int64, readOnly bool) bool {
	if int64(gid) != fsGroup {
		return true
	}
	want := ownershipMode(0, true, readOnly)
	return mode&want != want
}

// fsGroupOf returns the pod's fsGroup and whether OnRootMismatch applies.
func fsGroupOf(pod *corev1.Pod) (*int64, bool) {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.FSGroup == nil {
		return nil, false
	}
	onRoot := sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == corev1.FSGroupChangeOnRootMismatch
	return sc.FSGroup, onRoot
}

// setOwnership gives every file below dir the group fsGroup with
// ownershipMode; with onRootMismatch it does nothing when dir already
// matches. Symlinks are chowned but not chmodded (chmod would follow them).
func setOwnership(dir string, fsGroup int64, readOnly, onRootMismatch bool) error {
	if onRootMismatch {
		info, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("stat volume root %q: %w", dir, err)
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && !rootNeedsChange(st.Gid, info.Mode(), fsGroup, readOnly) {
			return nil
		}
	}
	return filepath.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(fsGroup)); err != nil {
			return fmt.Errorf("chown %q: %w", path, err)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		if err := os.Chmod(path, ownershipMode(info.Mode(), info.IsDir(), readOnly)); err != nil {
			return fmt.Errorf("chmod %q: %w", path, err)
		}
		return nil
	})
}
