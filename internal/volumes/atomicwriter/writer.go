package atomicwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"
)

// maxVersionAttempts bounds the names tried for a new version directory.
const maxVersionAttempts = 100

// Write makes dir hold exactly payload and reports whether it wrote a new
// version. now names the version directory. setPerms, when not nil, runs on
// the new version directory after its files are written and before it is
// published (the volume manager applies fsGroup ownership there).
//
// dir is opened once as an os.Root and every later step works relative to
// it, so nothing a container planted in dir (the volume is mounted
// read-only, but the writer does not rely on that) can lead the writer
// outside it. Within dir the writer reads and removes only what it
// recognises as its own: ..data is followed only when it is a symlink to a
// sibling version directory (a name matching the timestamp pattern, itself
// a real directory); old versions are removed only by such names; top-level
// names are removed only when they are symlinks, which are unlinked, never
// followed (see tidy). A ..data that is a symlink to anything else is
// treated as no version at all and replaced by the next one; a ..data that
// is not a symlink is an error.
func Write(dir string, payload Payload, now time.Time, setPerms func(version *os.Root) error) (bool, error) {
	next, err := Normalize(payload)
	if err != nil {
		return false, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, fmt.Errorf("open volume directory %q: %w", dir, err)
	}
	defer root.Close()
	oldVersion, err := currentVersion(root)
	if err != nil {
		return false, err
	}
	var old Payload
	if oldVersion != "" {
		if old, err = readVersion(root, oldVersion); err != nil {
			return false, err
		}
	}
	plan, err := Compute(old, next)
	if err != nil {
		return false, err
	}
	if !plan.Changed {
		return false, createVisible(root, plan.Visible)
	}
	version, err := publish(root, next, now, setPerms)
	if err != nil {
		return false, err
	}
	return true, errors.Join(createVisible(root, plan.Visible), tidy(root, version, plan))
}

// publish writes payload into a new version directory and swaps ..data to
// it with one rename. It returns the version directory's name.
func publish(root *os.Root, payload Payload, now time.Time, setPerms func(*os.Root) error) (string, error) {
	version, err := mkVersionDir(root, now)
	if err != nil {
		return "", err
	}
	if err := fillVersion(root, version, payload, setPerms); err != nil {
		_ = root.RemoveAll(version)
		return "", err
	}
	if err := root.Remove(newDataDirName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("remove stale %q: %w", newDataDirName, err)
	}
	if err := root.Symlink(version, newDataDirName); err != nil {
		return "", fmt.Errorf("create symlink %q: %w", newDataDirName, err)
	}
	// rename(2) replaces the name ..data itself; it never follows it.
	if err := root.Rename(newDataDirName, DataDirName); err != nil {
		return "", fmt.Errorf("rename %q to %q: %w", newDataDirName, DataDirName, err)
	}
	return version, nil
}

// mkVersionDir creates a fresh version directory, 0755 as upstream so that
// any user a container runs as can read it.
func mkVersionDir(root *os.Root, now time.Time) (string, error) {
	for range maxVersionAttempts {
		name := newVersionName(now)
		err := root.Mkdir(name, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create version directory %q: %w", name, err)
		}
		// Mkdir's mode is filtered by the umask; set it exactly.
		if err := root.Chmod(name, 0o755); err != nil {
			return "", fmt.Errorf("chmod version directory %q: %w", name, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("create version directory: %d names taken", maxVersionAttempts)
}

func fillVersion(root *os.Root, version string, payload Payload, setPerms func(*os.Root) error) error {
	vroot, err := root.OpenRoot(version)
	if err != nil {
		return fmt.Errorf("open version directory %q: %w", version, err)
	}
	defer vroot.Close()
	for p, f := range payload {
		if err := writeFile(vroot, p, f); err != nil {
			return err
		}
	}
	if setPerms != nil {
		if err := setPerms(vroot); err != nil {
			return fmt.Errorf("set permissions of %q: %w", version, err)
		}
	}
	return nil
}

// writeFile creates the file p (a cleaned path) of a fresh version
// directory. O_EXCL: it never opens something that is already there.
func writeFile(vroot *os.Root, p string, f File) error {
	if d := path.Dir(p); d != "." {
		if err := vroot.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create directory for %q: %w", p, err)
		}
	}
	mode := fs.FileMode(f.Mode) & fs.ModePerm
	out, err := vroot.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("create file %q: %w", p, err)
	}
	err = fillFile(out, f, mode)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write file %q: %w", p, err)
	}
	return nil
}

func fillFile(out *os.File, f File, mode fs.FileMode) error {
	if _, err := out.Write(f.Data); err != nil {
		return err
	}
	// OpenFile's mode is filtered by the umask; set it exactly.
	if err := out.Chmod(mode); err != nil {
		return err
	}
	if f.FsUser != nil {
		return out.Chown(int(*f.FsUser), -1)
	}
	return nil
}
