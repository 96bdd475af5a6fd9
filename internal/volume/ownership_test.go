package volume

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOwnershipMode(t *testing.T) {
	tests := []struct {
		name     string
		mode     fs.FileMode
		isDir    bool
		readOnly bool
		want     fs.FileMode
	}{
		{name: "rw file", mode: 0o600, want: 0o660},
		{name: "ro file", mode: 0o600, readOnly: true, want: 0o640},
		{name: "rw dir", mode: 0o700, isDir: true, want: 0o770 | os.ModeSetgid},
		{name: "ro dir", mode: 0o755, isDir: true, readOnly: true, want: 0o755 | os.ModeSetgid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownershipMode(tt.mode, tt.isDir, tt.readOnly); got != tt.want {
				t.Errorf("ownershipMode() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRootNeedsChange(t *testing.T) {
	tests := []struct {
		name string
		gid  uint32
		mode fs.FileMode
		want bool
	}{
		{name: "matches", gid: 2000, mode: 0o2770, want: false},
		{name: "other group", gid: 0, mode: 0o2770, want: true},
		{name: "no setgid", gid: 2000, mode: 0o770, want: true},
		{name: "no group write", gid: 2000, mode: 0o2750, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := tt.mode.Perm()
			if tt.mode&0o2000 != 0 {
				mode |= os.ModeSetgid
			}
			if got := rootNeedsChange(tt.gid, mode, 2000, false); got != tt.want {
				t.Errorf("rootNeedsChange() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSetOwnership(t *testing.T) {
	dir := t.TempDir()
	gid := int64(os.Getgid())
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := setOwnership(dir, gid, false, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"sub": 0o770 | os.ModeSetgid | fs.ModeDir, "sub/f": 0o660}
	for p, mode := range want {
		info, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != mode {
			t.Errorf("mode of %s = %v, want %v", p, info.Mode(), mode)
		}
		if g := info.Sys().(*syscall.Stat_t).Gid; int64(g) != gid {
			t.Errorf("group of %s = %d, want %d", p, g, gid)
		}
	}
	// OnRootMismatch: the root matches now, so a new file is left alone.
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := setOwnership(dir, gid, false, true); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(filepath.Join(dir, "new")); info.Mode().Perm() != 0o600 {
		t.Errorf("OnRootMismatch changed a file under a matching root: %v", info.Mode())
	}
}
