package atomicwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Write makes dir hold exactly payload and reports whether it wrote a new
// version. now names the version directory. setPerms, when not nil, runs on
// the new version directory after its files are written and before it is
// published (the volume manager applies fsGroup ownership there).
func Write(dir string, payload Payload, now time.Time, setPerms func(versionDir string) error) (bool, error) {
	payload, err := Normalize(payload)
	if err != nil {
		return false, err
	}
	oldVersion, err := readDataLink(dir)
	if err != nil {
		return false, err
	}
	var old Payload
	if oldVersion != "" {
		if old, err = ReadPayload(filepath.Join(dir, oldVersion)); err != nil {
			return false, err
		}
	}
	plan, err := Compute(old, payload)
	if err != nil {
		return false, err
	}
	if !plan.Changed {
		return false, createVisible(dir, plan.Visible)
	}
	versionDir, err := os.MkdirTemp(dir, now.UTC().Format(tsLayout))
	if err != nil {
		return false, fmt.Errorf("create version directory in %q: %w", dir, err)
	}
	if err := publish(dir, versionDir, payload, setPerms); err != nil {
		_ = os.RemoveAll(versionDir)
		return false, err
	}
	if err := createVisible(dir, plan.Visible); err != nil {
		return true, err
	}
	for _, top := range plan.Remove {
		if err := os.RemoveAll(filepath.Join(dir, top)); err != nil {
			return true, fmt.Errorf("remove old path %q: %w", top, err)
		}
	}
	if oldVersion != "" {
		if err := os.RemoveAll(filepath.Join(dir, oldVersion)); err != nil {
			return true, fmt.Errorf("remove old version %q: %w", oldVersion, err)
		}
	}
	return true, nil
}

// publish writes payload into versionDir and swaps ..data to it with one
// rename.
func publish(dir, versionDir string, payload Payload, setPerms func(string) error) error {
	if err := os.Chmod(versionDir, 0o755); err != nil {
		return fmt.Errorf("chmod version directory %q: %w", versionDir, err)
	}
	if err := writePayload(versionDir, payload); err != nil {
		return err
	}
	if setPerms != nil {
		if err := setPerms(versionDir); err != nil {
			return fmt.Errorf("set permissions of %q: %w", versionDir, err)
		}
	}
	tmpLink := filepath.Join(dir, newDataDirName)
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale %q: %w", tmpLink, err)
	}
	if err := os.Symlink(filepath.Base(versionDir), tmpLink); err != nil {
		return fmt.Errorf("create symlink %q: %w", tmpLink, err)
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, DataDirName)); err != nil {
		return fmt.Errorf("rename %q to %q: %w", tmpLink, DataDirName, err)
	}
	return nil
}

func writePayload(versionDir string, payload Payload) error {
	for p, f := range payload {
		full := filepath.Join(versionDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("create directory for %q: %w", p, err)
		}
		mode := fs.FileMode(f.Mode) & fs.ModePerm
		if err := os.WriteFile(full, f.Data, mode); err != nil {
			return fmt.Errorf("write file %q: %w", p, err)
		}
		// WriteFile's mode is filtered by the umask; set it exactly.
		if err := os.Chmod(full, mode); err != nil {
			return fmt.Errorf("chmod file %q: %w", p, err)
		}
		if f.FsUser != nil {
			if err := os.Chown(full, int(*f.FsUser), -1); err != nil {
				return fmt.Errorf("chown file %q: %w", p, err)
			}
		}
	}
	return nil
}

// createVisible makes every top-level name a symlink into ..data unless a
// file of that name already exists.
func createVisible(dir string, tops []string) error {
	for _, top := range tops {
		link := filepath.Join(dir, top)
		if _, err := os.Lstat(link); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("stat %q: %w", link, err)
		}
		if err := os.Symlink(filepath.Join(DataDirName, top), link); err != nil {
			return fmt.Errorf("create symlink %q: %w", link, err)
		}
	}
	return nil
}

// readDataLink returns the version directory ..data points at, or "" when
// there is none.
func readDataLink(dir string) (string, error) {
	target, err := os.Readlink(filepath.Join(dir, DataDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %q: %w", DataDirName, err)
	}
	if _, err := os.Stat(filepath.Join(dir, target)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return target, nil
}

// ReadPayload reads the regular files below versionDir back as a payload.
func ReadPayload(versionDir string) (Payload, error) {
	out := Payload{}
	root, err := filepath.EvalSymlinks(versionDir)
	if err != nil {
		return nil, fmt.Errorf("resolve version directory %q: %w", versionDir, err)
	}
	versionDir = root
	err = filepath.WalkDir(versionDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(versionDir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = File{Data: data, Mode: int32(info.Mode().Perm())}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read version directory %q: %w", versionDir, err)
	}
	return out, nil
}
