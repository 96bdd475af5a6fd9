package userns

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// store keeps the mappings files in PodsDir/<uid>/. A pod's directory
// holds what its volumes and containers may write, so nothing under it is
// followed: the pod directory and the file are opened with O_NOFOLLOW
// relative to descriptors (STYLE rule 15), and a file is replaced by
// writing a temporary file next to it and renaming it, then syncing the
// directory (upstream's file store and fsync). Pod UIDs are checked to be
// one path element before they become one.
type store struct {
	podsDir string
}

// tmpFile is the temporary name a mappings file is written under.
const tmpFile = "." + MappingsFile + ".tmp"

func validUID(uid types.UID) error {
	s := string(uid)
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\x00") {
		return fmt.Errorf("invalid pod UID %q: not a single path element", s)
	}
	return nil
}

// openPodDir opens PodsDir/<uid> without following a symlink.
func (s store) openPodDir(uid types.UID) (*os.File, error) {
	if err := validUID(uid); err != nil {
		return nil, err
	}
	root, err := os.OpenFile(s.podsDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open pods directory %q: %w", s.podsDir, err)
	}
	defer root.Close()
	fd, err := unix.Openat(int(root.Fd()), string(uid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: s.podsDir + "/" + string(uid), Err: err}
	}
	return os.NewFile(uintptr(fd), s.podsDir+"/"+string(uid)), nil
}

// read returns the pod's mappings file, or nil when the pod has no
// directory or no file (a pod without a user namespace).
func (s store) read(uid types.UID) ([]byte, error) {
	dir, err := s.openPodDir(uid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	fd, err := unix.Openat(int(dir.Fd()), MappingsFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open user namespace mappings of pod %q: %w", uid, err)
	}
	f := os.NewFile(uintptr(fd), MappingsFile)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read user namespace mappings of pod %q: %w", uid, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("read user namespace mappings of pod %q: larger than %d bytes", uid, maxFileSize)
	}
	return b, nil
}

// write replaces the pod's mappings file with content, durably.
func (s store) write(uid types.UID, content []byte) error {
	dir, err := s.openPodDir(uid)
	if err != nil {
		return fmt.Errorf("write user namespace mappings: %w", err)
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	fd, err := unix.Openat(dfd, tmpFile, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create user namespace mappings of pod %q: %w", uid, err)
	}
	f := os.NewFile(uintptr(fd), tmpFile)
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmpFile, dfd, MappingsFile)
	}
	if err == nil {
		err = dir.Sync()
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmpFile, 0)
		return fmt.Errorf("write user namespace mappings of pod %q: %w", uid, err)
	}
	return nil
}

// remove deletes the pod's mappings file; a missing one is no error.
func (s store) remove(uid types.UID) error {
	dir, err := s.openPodDir(uid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := unix.Unlinkat(int(dir.Fd()), MappingsFile, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove user namespace mappings of pod %q: %w", uid, err)
	}
	return nil
}

// list returns the UIDs of the pod directories in PodsDir (upstream
// listPodsFromDisk); no PodsDir is no pods.
func (s store) list() ([]types.UID, error) {
	entries, err := os.ReadDir(s.podsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pods directory %q: %w", s.podsDir, err)
	}
	var out []types.UID
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, types.UID(e.Name()))
		}
	}
	return out, nil
}
