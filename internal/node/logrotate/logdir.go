package logrotate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// logDir is the directory of one container's log, opened under the pod
// logs directory: every operation goes through root, so nothing resolves
// outside it, and no step of the way there is a symlink.
type logDir struct {
	root *os.Root
	// base is the current log's name in the directory.
	base string
}

// openLogDir opens the directory of logPath, which must lie below
// podLogsDir, refusing a symlink on the way; the log file itself is only
// named, not opened.
func openLogDir(podLogsDir, logPath string) (*logDir, error) {
	rel, err := filepath.Rel(podLogsDir, logPath)
	if err != nil || !filepath.IsLocal(rel) || filepath.Dir(rel) == "." {
		return nil, fmt.Errorf("open log directory of %q: not below %q", logPath, podLogsDir)
	}
	top, err := os.OpenRoot(podLogsDir)
	if err != nil {
		return nil, fmt.Errorf("open pod logs directory %q: %w", podLogsDir, err)
	}
	defer func() { _ = top.Close() }()
	dir := filepath.Dir(rel)
	parts := strings.Split(dir, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		st, err := top.Lstat(p)
		if err != nil {
			return nil, fmt.Errorf("open log directory %q: %w", filepath.Join(podLogsDir, p), err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("open log directory %q: not a directory", filepath.Join(podLogsDir, p))
		}
	}
	root, err := top.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open log directory %q: %w", filepath.Join(podLogsDir, dir), err)
	}
	return &logDir{root: root, base: filepath.Base(rel)}, nil
}

func (d *logDir) Close() error { return d.root.Close() }

// siblings lists the names in the directory that start with base+".".
func (d *logDir) siblings() ([]string, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("list log directory: %w", err)
	}
	defer func() { _ = f.Close() }()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list log directory: %w", err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, d.base+".") {
			out = append(out, n)
		}
	}
	return out, nil
}

// size returns the size of the current log, which must be a regular file
// (Lstat: a symlink is not followed).
func (d *logDir) size() (int64, error) {
	st, err := d.root.Lstat(d.base)
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("log %q is not a regular file", d.base)
	}
	return st.Size(), nil
}

// remove removes name; a file already gone is fine.
func (d *logDir) remove(name string) error {
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove log %q: %w", name, err)
	}
	return nil
}
