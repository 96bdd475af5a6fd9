package atomicwriter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadPayload reads the current version of the volume directory dir back
// as a payload, with the checks Write makes: nil when dir holds no version
// the writer recognises.
func ReadPayload(dir string) (Payload, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open volume directory %q: %w", dir, err)
	}
	defer root.Close()
	version, err := currentVersion(root)
	if err != nil || version == "" {
		return nil, err
	}
	return readVersion(root, version)
}

// currentVersion returns the version directory ..data points at, or ""
// when there is none the writer recognises: no ..data, or a ..data that
// does not point at a sibling named like a version directory, or a sibling
// of that name that is not a directory. Nothing is followed to find out:
// ..data is read with readlink(2) and its target checked by name and
// lstat(2). A ..data that is not a symlink is an error, since renaming the
// next version's link over it would fail anyway.
func currentVersion(root *os.Root) (string, error) {
	info, err := root.Lstat(DataDirName)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("stat %q: %w", DataDirName, err)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return "", fmt.Errorf("check %q: not a symlink (mode %v); the writer made no such entry", DataDirName, info.Mode())
	}
	target, err := root.Readlink(DataDirName)
	if err != nil {
		return "", fmt.Errorf("read %q: %w", DataDirName, err)
	}
	if !isVersionName(target) {
		return "", nil
	}
	vinfo, err := root.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("stat version directory %q: %w", target, err)
	}
	if !vinfo.IsDir() {
		return "", nil
	}
	return target, nil
}

// readVersion reads the regular files of the version directory version.
// Symlinks and special files in it are not the writer's and are skipped.
func readVersion(root *os.Root, version string) (Payload, error) {
	vroot, err := root.OpenRoot(version)
	if err != nil {
		return nil, fmt.Errorf("open version directory %q: %w", version, err)
	}
	defer vroot.Close()
	out := Payload{}
	err = fs.WalkDir(vroot.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, ok, err := readFile(vroot, p)
		if ok {
			out[p] = f
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read version directory %q: %w", version, err)
	}
	return out, nil
}

// readFile reads the regular file p. O_NONBLOCK: should p have become a
// FIFO since the directory was listed, opening it does not hang; it is
// then reported as not read (ok false).
func readFile(vroot *os.Root, p string) (File, bool, error) {
	f, err := vroot.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return File{}, false, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return File{}, false, err
	}
	return File{Data: data, Mode: int32(info.Mode().Perm())}, true, nil
}
