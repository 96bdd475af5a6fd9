//go:build linux

package subpath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
)

// bindDepth is how far below <PodDir>/volume-subpaths the binds are:
// <volume>/<container>/<index>.
const bindDepth = 3

// CleanPod unmounts every subPath bind of the pod whose directory is podDir
// and removes <podDir>/volume-subpaths. It never follows a symlink and never
// removes recursively: a directory goes only once it is empty, so what a
// bind that could not be unmounted shows is never touched, and the error
// tells the caller to keep the pod directory. Call it once the pod's
// containers are gone, before the pod directory is removed.
func (b *Binder) CleanPod(ctx context.Context, podDir string) error {
	if err := b.clean(ctx, filepath.Join(podDir, DirName), bindDepth); err != nil {
		return fmt.Errorf("clean subPath binds of %q: %w", podDir, err)
	}
	return nil
}

// clean removes path, which is levels above the bind mount points; every
// failure is reported, after the rest was cleaned.
func (b *Binder) clean(ctx context.Context, path string, levels int) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		// Never one of berth's: removed, not followed.
		return os.Remove(path)
	case levels == 0:
		// mount-utils unmounts (if mounted) and removes the mount point
		// only once it is no longer one.
		if err := mount.CleanupMountPoint(path, b.mounter(), true); err != nil {
			return fmt.Errorf("unmount subPath bind %q: %w", path, err)
		}
		klog.FromContext(ctx).V(4).Info("Removed subPath bind", "path", path)
		return nil
	case !fi.IsDir():
		return os.Remove(path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, b.clean(ctx, filepath.Join(path, e.Name()), levels-1))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(path)
}
