//go:build linux

package subpath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
)

// Config configures a Binder.
type Config struct {
	// Mounter makes and removes the binds; nil means k8s.io/mount-utils'
	// mount(8) mounter without systemd, created on first use.
	Mounter mount.Interface
}

// Binder binds subPaths for containers and removes the binds of a pod.
// It is safe for concurrent use (see the package comment).
type Binder struct {
	mounter func() mount.Interface // set by New, never changed
}

// New returns a Binder. It starts nothing.
func New(cfg Config) *Binder {
	if cfg.Mounter != nil {
		m := cfg.Mounter
		return &Binder{mounter: func() mount.Interface { return m }}
	}
	return &Binder{mounter: sync.OnceValue(func() mount.Interface { return mount.NewWithoutSystemd("") })}
}

// Bind opens the request's subPath inside its volume (creating missing
// directories), binds it at <PodDir>/volume-subpaths/<volume>/<container>/
// <index> and returns that path, which is what the runtime must mount.
func (b *Binder) Bind(ctx context.Context, r Request) (string, error) {
	if err := r.validate(); err != nil {
		return "", err
	}
	src, err := openSubPath(r.VolumeDir, r.SubPath)
	if err != nil {
		return "", err
	}
	defer src.Close()
	var want unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &want); err != nil {
		return "", fmt.Errorf("stat subPath %q: %w", r.SubPath, err)
	}
	target := r.target()
	bound, err := b.prepareTarget(ctx, target, &want)
	if err != nil || bound {
		return target, err
	}
	// mount(8) runs in its own process: it reaches the descriptor through
	// berth's pid, and --no-canonicalize keeps it from resolving the link
	// into a path again.
	source := fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), src.Fd())
	err = b.mounter().MountSensitiveWithoutSystemdWithMountFlags(source, target, "", []string{"bind"}, nil, []string{"--no-canonicalize"})
	runtime.KeepAlive(src)
	if err != nil {
		return "", fmt.Errorf("bind subPath %q at %q: %w", r.SubPath, target, err)
	}
	if err := sameFile(target, &want); err != nil {
		if uerr := b.mounter().Unmount(target); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return "", fmt.Errorf("check bind of subPath %q at %q: %w", r.SubPath, target, err)
	}
	klog.FromContext(ctx).V(3).Info("Bound subPath", "subPath", r.SubPath, "volume", r.Volume, "target", target)
	return target, nil
}

// prepareTarget readies the bind's mount point for a source whose stat is
// want. It reports true when a bind of that very inode is already there (a
// restarted berth, a container re-created with an unchanged subPath); a
// bind of anything else is unmounted, to be replaced.
func (b *Binder) prepareTarget(ctx context.Context, target string, want *unix.Stat_t) (bool, error) {
	bound, err := b.unmountStale(ctx, target, want)
	if err != nil || bound {
		return bound, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return false, fmt.Errorf("create subPath bind directory: %w", err)
	}
	return false, makeMountPoint(target, want.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// unmountStale unmounts what is mounted on target unless it is the inode
// of want, in which case it reports true.
func (b *Binder) unmountStale(ctx context.Context, target string, want *unix.Stat_t) (bool, error) {
	m := b.mounter()
	for range maxStacked {
		mounted, err := m.IsMountPoint(target)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !mounted) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("check mount %q: %w", target, err)
		}
		if sameFile(target, want) == nil {
			klog.FromContext(ctx).V(4).Info("SubPath already bound", "target", target)
			return true, nil
		}
		if err := m.Unmount(target); err != nil {
			return false, fmt.Errorf("unmount stale subPath bind %q: %w", target, err)
		}
	}
	return false, fmt.Errorf("unmount stale subPath bind %q: still mounted after %d unmounts", target, maxStacked)
}

// maxStacked bounds the unmounts of stale binds stacked on one target.
const maxStacked = 8

// makeMountPoint creates target as a directory, or as an empty file for
// any other source (a bind onto a file takes the source's type), replacing
// a mount point of the other kind left by an earlier bind.
func makeMountPoint(target string, dir bool) error {
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.IsDir() == dir && (dir || fi.Mode().IsRegular()):
		return nil
	case err == nil:
		// Not mounted (prepareTarget checked): an empty directory or a
		// file, removed without recursion.
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("replace subPath mount point %q: %w", target, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("check subPath mount point %q: %w", target, err)
	}
	if dir {
		if err := os.Mkdir(target, 0o750); err != nil {
			return fmt.Errorf("create subPath mount point %q: %w", target, err)
		}
		return nil
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create subPath mount point %q: %w", target, err)
	}
	return f.Close()
}

// sameFile reports an error unless path (not followed) is the inode of st.
func sameFile(path string, st *unix.Stat_t) error {
	var got unix.Stat_t
	if err := unix.Lstat(path, &got); err != nil {
		return fmt.Errorf("stat %q: %w", path, err)
	}
	if got.Dev != st.Dev || got.Ino != st.Ino {
		return fmt.Errorf("%q is not the subPath that was opened", path)
	}
	return nil
}
