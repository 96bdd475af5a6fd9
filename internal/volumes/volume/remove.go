package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RemoveOneFilesystem removes dir and everything below it (a pod's
// directory, its volumes directory), as
// os.RemoveAll, but never crosses into another filesystem: a directory on
// another device than dir's (a mount tear-down missed, or one a pod made
// with bidirectional propagation) stops the removal with an error before
// anything of that directory is touched, as upstream's
// RemoveDirsOneFilesystem. Symlinks are removed, never followed. An
// absent dir is no error.
func RemoveOneFilesystem(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return removeOn(dir, info, deviceOf(info))
}

func removeOn(path string, info fs.FileInfo, dev uint64) error {
	if !info.IsDir() {
		return os.Remove(path)
	}
	if d := deviceOf(info); d != dev {
		return fmt.Errorf("refusing to remove %q: it is on another filesystem (a mount is left in it)", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		ci, err := os.Lstat(child)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := removeOn(child, ci, dev); err != nil {
			return err
		}
	}
	return os.Remove(path)
}

// deviceOf is the device a file is on.
func deviceOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev) //nolint:unconvert // Dev is not uint64 on every platform
	}
	return 0
}
