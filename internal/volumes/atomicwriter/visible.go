package atomicwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// createVisible makes every top-level name a symlink to ..data/<name>. A
// symlink with another target is not the writer's: it is unlinked (never
// followed) and replaced. Anything else of that name is left alone, as
// upstream does: the volume manager makes directories there as mount
// points for volumes nested beneath this one, which hide the name anyway.
func createVisible(root *os.Root, tops []string) error {
	var errs []error
	for _, top := range tops {
		want := path.Join(DataDirName, top)
		info, err := root.Lstat(top)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, fmt.Errorf("stat %q: %w", top, err))
			continue
		case info.Mode()&fs.ModeSymlink == 0:
			continue
		default:
			if target, err := root.Readlink(top); err == nil && target == want {
				continue
			}
			if err := root.Remove(top); err != nil {
				errs = append(errs, fmt.Errorf("remove foreign symlink %q: %w", top, err))
				continue
			}
		}
		if err := root.Symlink(want, top); err != nil {
			errs = append(errs, fmt.Errorf("create symlink %q: %w", top, err))
		}
	}
	return errors.Join(errs...)
}

// tidy removes, after a new version was published, what the writer made
// and no longer needs, and nothing else:
//
//   - every entry named like a version directory but keep: the version just
//     replaced and any left behind by a failed write or a replaced planted
//     ..data. os.Root.RemoveAll unlinks a symlink of such a name and
//     removes a directory without following any symlink in it;
//   - the top-level names of vanished paths (plan.Remove) when they are
//     symlinks: unlinked, never followed;
//   - symlinks to ..data/<name> whose name is not visible any more, which
//     plan.Remove misses when the old version was not recognised.
//
// A file or directory of a top-level name the writer did not make stays.
func tidy(root *os.Root, keep string, plan Plan) error {
	d, err := root.Open(".")
	if err != nil {
		return fmt.Errorf("open volume directory: %w", err)
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return fmt.Errorf("list volume directory: %w", err)
	}
	visible := setOf(plan.Visible)
	vanished := setOf(plan.Remove)
	var errs []error
	for _, name := range names {
		switch {
		case name == keep || visible[name]:
		case isVersionName(name):
			if err := root.RemoveAll(name); err != nil {
				errs = append(errs, fmt.Errorf("remove old version %q: %w", name, err))
			}
		case vanished[name] || isOwnLink(root, name):
			if err := removeLink(root, name); err != nil {
				errs = append(errs, fmt.Errorf("remove old path %q: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// isOwnLink reports whether name is a symlink the writer makes for a
// top-level path: to ..data/<name>.
func isOwnLink(root *os.Root, name string) bool {
	target, err := root.Readlink(name)
	return err == nil && target == path.Join(DataDirName, name)
}

// removeLink unlinks name when it is a symlink.
func removeLink(root *os.Root, name string) error {
	info, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && info.Mode()&fs.ModeSymlink == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	return root.Remove(name)
}

func setOf(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}
