//go:build linux

package subpath

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBindCreatesSubPathWithFSGroup is upstream's "nonexistent volume
// subPath should have the correct mode and owner using FSGroup": an
// emptyDir on tmpfs (root 1777) given fsGroup 123 (setgid, group 123) has
// a missing subPath created as upstream's SafeMakeDir does, with the
// root's whole mode (setgid and sticky included: the test reads
// dgtrwxrwxrwx), whatever the umask, owned by berth's user and, through
// the setgid root, by the fsGroup. Berth's own group (0) owns it when the
// root is not setgid.
func TestBindCreatesSubPathWithFSGroup(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode uint32
		gid  uint32 // the group the new directory gets
	}{
		{"tmpfs root with fsGroup", 0o3777, 123},
		{"default medium with fsGroup", 0o2777, 123},
		{"no setgid: the creator's group", 0o1777, 0},
		{"setuid root", 0o4755, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.must(unix.Chown(f.root, 0, 123))
			f.must(unix.Chmod(f.root, tt.mode))
			old := unix.Umask(0o022)
			defer unix.Umask(old)
			if _, err := f.b.Bind(f.ctx, f.request("test-sub", 0)); err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			f.must(unix.Lstat(filepath.Join(f.root, "test-sub"), &st))
			if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o7777 != tt.mode || st.Uid != 0 || st.Gid != tt.gid {
				t.Errorf("test-sub: mode %o uid %d gid %d, want a directory of mode %o, uid 0, gid %d", st.Mode, st.Uid, st.Gid, tt.mode, tt.gid)
			}
		})
	}
}
