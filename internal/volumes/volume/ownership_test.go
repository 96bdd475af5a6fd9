package volume

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if err := setOwnershipAt(dir, gid, false, false); err != nil {
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
	if err := setOwnershipAt(dir, gid, false, true); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(filepath.Join(dir, "new")); info.Mode().Perm() != 0o600 {
		t.Errorf("OnRootMismatch changed a file under a matching root: %v", info.Mode())
	}
}

// owners records the group and mode of every entry below dir.
func owners(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = strconv.Itoa(int(info.Sys().(*syscall.Stat_t).Gid)) + " " + info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mkfiles(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSetOwnershipDoesNotFollowSymlinks: symlinks in the volume that point
// outside it, to a directory and to a file, leave their targets alone.
func TestSetOwnershipDoesNotFollowSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	mkfiles(t, filepath.Join(outside, "sub"), 3)
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "sub", "f0"), filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	before := owners(t, outside)
	if err := setOwnershipAt(dir, fsGroupForTest(), false, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, owners(t, outside)); diff != "" {
		t.Errorf("files outside the volume changed (-before +after):\n%s", diff)
	}
}

// TestSetOwnershipStaysInsideWhenTreeChanges walks a volume while its
// container keeps swapping a directory for a symlink to a host directory
// and back. No walk may change a host file. (The walk by path this
// replaced failed this within a few rounds; a correct walk never does, so
// the test cannot be flaky in the passing direction only.)
func TestSetOwnershipStaysInsideWhenTreeChanges(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	sub := filepath.Join(dir, "sub")
	mkfiles(t, sub, 50)
	mkfiles(t, outside, 50)
	before := owners(t, outside)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Rename(sub, sub+".real")
			_ = os.Symlink(outside, sub)
			hold(sub)
			_ = os.Remove(sub)
			_ = os.Rename(sub+".real", sub)
			hold(sub)
		}
	}()
	for range 200 {
		_ = setOwnershipAt(dir, fsGroupForTest(), false, false) // errors are expected mid-swap
	}
	close(stop)
	<-done
	if diff := cmp.Diff(before, owners(t, outside)); diff != "" {
		t.Errorf("files outside the volume changed (-before +after):\n%s", diff)
	}
}

// hold keeps the state of p a while (a few dozen system calls), so that a
// walk can enter it.
func hold(p string) {
	for range 50 {
		_, _ = os.Lstat(p)
	}
}

// fsGroupForTest is a group the test may chown to: another one as root,
// so that a changed group shows; else the test's own (the mode shows).
func fsGroupForTest() int64 {
	if os.Geteuid() == 0 {
		return 4321
	}
	return int64(os.Getgid())
}
