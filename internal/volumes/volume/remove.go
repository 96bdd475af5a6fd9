package volume

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// RemoveOneFilesystem removes dir and everything below it (a pod's
// directory, its volumes directory), as os.RemoveAll, but never crosses
// into another filesystem: a directory on another device than dir's (a
// mount tear-down missed, or one a pod made with bidirectional
// propagation) stops the removal with an error before anything of that
// directory is touched, as upstream's RemoveDirsOneFilesystem. The walk
// goes from descriptor to descriptor (openat with O_NOFOLLOW, unlinkat),
// never by path, so a symlink planted anywhere below dir, even while the
// walk runs, is removed and never followed. An absent dir is no error.
func RemoveOneFilesystem(dir string) error {
	dir = filepath.Clean(dir)
	parent, err := unix.Open(filepath.Dir(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %q: %w", filepath.Dir(dir), err)
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	err = unix.Fstatat(parent, filepath.Base(dir), &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %q: %w", dir, err)
	}
	return removeAt(parent, filepath.Base(dir), dir, &st, st.Dev)
}

// removeAt removes the entry name of the directory parent (path is its
// name, for errors), whose lstat is st, on device dev only.
func removeAt(parent int, name, path string, st *unix.Stat_t, dev uint64) error {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unlinkAt(parent, name, path, 0)
	}
	if uint64(st.Dev) != dev { //nolint:unconvert // Dev is not uint64 on every platform
		return fmt.Errorf("refusing to remove %q: it is on another filesystem (a mount is left in it)", path)
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %q: %w", path, err)
	}
	d := os.NewFile(uintptr(fd), path)
	defer d.Close()
	// The directory opened must be the one stat saw: not swapped since.
	var opened unix.Stat_t
	if err := unix.Fstat(fd, &opened); err != nil {
		return fmt.Errorf("stat %q: %w", path, err)
	}
	if opened.Dev != st.Dev || opened.Ino != st.Ino {
		return fmt.Errorf("refusing to remove %q: it changed during the removal", path)
	}
	// Batches from the start each time, as os.RemoveAll: what a batch
	// removed is gone from the next, and no entry is skipped.
	for {
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read %q: %w", path, err)
		}
		names, err := d.Readdirnames(1024)
		if len(names) == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read %q: %w", path, err)
			}
			break
		}
		for _, child := range names {
			var cst unix.Stat_t
			if err := unix.Fstatat(fd, child, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return fmt.Errorf("stat %q: %w", filepath.Join(path, child), err)
			}
			if err := removeAt(fd, child, filepath.Join(path, child), &cst, dev); err != nil {
				return err
			}
		}
	}
	return unlinkAt(parent, name, path, unix.AT_REMOVEDIR)
}

func unlinkAt(parent int, name, path string, flags int) error {
	if err := unix.Unlinkat(parent, name, flags); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}
