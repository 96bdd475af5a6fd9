package volume

import (
	"fmt"
	"io/fs"
	"os"
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

// setOwnership gives every file below root the group fsGroup with
// ownershipMode; with onRootMismatch it does nothing when the root already
// matches.
//
// The walk never leaves root, however the tree changes under it (an
// emptyDir is the container's to change): every path is resolved by
// os.Root, component by component with O_NOFOLLOW, and a symlink that
// would lead outside the root is an error. Symlinks are chowned, not
// followed (fchownat AT_SYMLINK_NOFOLLOW), and not chmodded; the walk
// does not descend into them.
func setOwnership(root *os.Root, fsGroup int64, readOnly, onRootMismatch bool) error {
	if onRootMismatch {
		info, err := root.Stat(".")
		if err != nil {
			return fmt.Errorf("stat volume root %q: %w", root.Name(), err)
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && !rootNeedsChange(st.Gid, info.Mode(), fsGroup, readOnly) {
			return nil
		}
	}
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := root.Lchown(p, -1, int(fsGroup)); err != nil {
			return fmt.Errorf("chown %q: %w", p, err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := root.Lstat(p)
		if err != nil {
			return fmt.Errorf("stat %q: %w", p, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil // replaced by a symlink since it was listed
		}
		if err := root.Chmod(p, ownershipMode(info.Mode(), info.IsDir(), readOnly)); err != nil {
			return fmt.Errorf("chmod %q: %w", p, err)
		}
		return nil
	})
}

// setOwnershipAt is setOwnership of the directory dir, which berth made
// (no container can swap it or its parents).
func setOwnershipAt(dir string, fsGroup int64, readOnly, onRootMismatch bool) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open volume directory %q: %w", dir, err)
	}
	defer root.Close()
	return setOwnership(root, fsGroup, readOnly, onRootMismatch)
}
