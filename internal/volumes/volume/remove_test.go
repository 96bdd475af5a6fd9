package volume

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRemoveOneFilesystem: a tree is removed, symlinks not followed; a
// mount left inside stops the removal and what it shows is untouched
// (issue #26, finding 7: os.RemoveAll went through it).
func TestRemoveOneFilesystem(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "volumes")
	for _, d := range []string{"a/b/c", "d"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a/b/c/f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d/link")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveOneFilesystem(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after removal: %v", dir, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file behind a symlink was removed: %v", err)
	}
	if err := RemoveOneFilesystem(dir); err != nil {
		t.Errorf("an absent directory: %v", err)
	}

	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	mnt := filepath.Join(dir, "kubernetes.io~empty-dir", "v", "nested")
	if err := os.MkdirAll(mnt, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) }()
	precious := filepath.Join(mnt, "precious")
	if err := os.WriteFile(precious, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := RemoveOneFilesystem(dir)
	if err == nil || !strings.Contains(err.Error(), "on another filesystem") {
		t.Errorf("removal through a mount = %v, want a refusal", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("the mount's content was removed: %v", err)
	}
}

// TestRemoveOneFilesystemManyEntries: a directory of more entries than one
// read batch is emptied whole, nested directories included.
func TestRemoveOneFilesystemManyEntries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pod")
	for i := range 3000 {
		sub := filepath.Join(dir, "d", strconv.Itoa(i%7))
		if err := os.MkdirAll(sub, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveOneFilesystem(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after removal: %v", dir, err)
	}
}
