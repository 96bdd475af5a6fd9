//go:build linux

package subpath

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/mount-utils"
)

// fixture is a volume, a pod directory and a host directory outside the
// volume with a marker file, all real directories; binds are real mounts,
// so the tests need root.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	b       *Binder
	root    string // the volume
	podDir  string
	outside string // a host directory the pod must never reach
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("subPath binds are real mounts: run as root")
	}
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	f := &fixture{t: t, ctx: ctx, b: New(Config{}), root: filepath.Join(dir, "volume"),
		podDir: filepath.Join(dir, "pod"), outside: filepath.Join(dir, "host")}
	for _, d := range []string{f.root, f.podDir, f.outside} {
		f.must(os.Mkdir(d, 0o755))
	}
	f.must(os.WriteFile(filepath.Join(f.outside, "marker"), []byte("host"), 0o644))
	// Before TempDir's removal: never remove through a bind.
	t.Cleanup(func() {
		if err := f.b.CleanPod(ctx, f.podDir); err != nil {
			t.Errorf("CleanPod: %v", err)
		}
	})
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) request(sub string, index int) Request {
	return Request{PodDir: f.podDir, Volume: "data", VolumeDir: f.root, SubPath: sub, Container: "app", Index: index}
}

// inode returns path's device and inode, the symlinks in it followed.
func inode(t *testing.T, path string) [2]uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint64{st.Dev, st.Ino}
}

// mountsUnder counts the mounts at or below dir.
func mountsUnder(t *testing.T, dir string) int {
	t.Helper()
	infos, err := mount.ParseMountInfo("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mi := range infos {
		if mi.MountPoint == dir || strings.HasPrefix(mi.MountPoint, dir+"/") {
			n++
		}
	}
	return n
}

func TestBindRefusesSymlinkOutside(t *testing.T) {
	f := newFixture(t)
	f.must(os.Mkdir(filepath.Join(f.root, "dir"), 0o755))
	f.must(os.Symlink(f.outside, filepath.Join(f.root, "escape")))
	f.must(os.Symlink("../../host", filepath.Join(f.root, "dir", "up")))
	f.must(os.Symlink(filepath.Join(f.outside, "marker"), filepath.Join(f.root, "abs")))
	for _, sub := range []string{"escape", "escape/new", "dir/up", "dir/up/marker", "abs"} {
		t.Run(sub, func(t *testing.T) {
			got, err := f.b.Bind(f.ctx, f.request(sub, 0))
			if err == nil || !strings.Contains(err.Error(), "escapes its volume") {
				t.Fatalf("Bind(%q) = %q, %v; want an escape refusal", sub, got, err)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(f.outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a directory was created outside the volume: %v", err)
	}
	if n := mountsUnder(t, f.podDir); n != 0 {
		t.Errorf("%d mounts under the pod directory after refusals", n)
	}
}

func TestBindCreatesMissingDirectoriesInside(t *testing.T) {
	f := newFixture(t)
	// fsGroup leaves the volume root setgid and group-writable: created
	// subPath directories get the same mode, whatever the umask.
	f.must(unix.Chmod(f.root, 0o2775))
	target, err := f.b.Bind(f.ctx, f.request("new/dir", 1))
	f.must(err)
	if want := filepath.Join(f.podDir, "volume-subpaths", "data", "app", "1"); target != want {
		t.Errorf("Bind = %q, want %q", target, want)
	}
	for _, d := range []string{"new", "new/dir"} {
		var st unix.Stat_t
		f.must(unix.Lstat(filepath.Join(f.root, d), &st))
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o7777 != 0o2775 {
			t.Errorf("%s: mode %o, want a directory of mode 2775", d, st.Mode)
		}
	}
	if inode(t, target) != inode(t, filepath.Join(f.root, "new", "dir")) {
		t.Errorf("bind %q does not show the created directory", target)
	}
}

func TestBindDoesNotCreateThroughPlantedSymlinks(t *testing.T) {
	f := newFixture(t)
	f.must(os.Symlink(f.outside, filepath.Join(f.root, "link")))
	f.must(os.Symlink(filepath.Join(f.outside, "missing"), filepath.Join(f.root, "dangling")))
	f.must(os.Symlink("/missing-too", filepath.Join(f.root, "dangling-abs")))
	for _, sub := range []string{"link/new", "link/new/deeper", "dangling", "dangling/new", "dangling-abs/new"} {
		t.Run(sub, func(t *testing.T) {
			if got, err := f.b.Bind(f.ctx, f.request(sub, 0)); err == nil {
				t.Fatalf("Bind(%q) = %q, want a refusal", sub, got)
			}
		})
	}
	entries, err := os.ReadDir(f.outside)
	f.must(err)
	if len(entries) != 1 {
		t.Errorf("the host directory holds %d entries, want only the marker", len(entries))
	}
	entries, err = os.ReadDir(f.root)
	f.must(err)
	if len(entries) != 3 {
		t.Errorf("the volume holds %d entries, want the 3 links only: a refusal created something", len(entries))
	}
}

func TestBindFollowsSymlinksInsideTheVolume(t *testing.T) {
	f := newFixture(t)
	// A configMap volume: key -> ..data/key, ..data -> ..2026_01_01.
	f.must(os.MkdirAll(filepath.Join(f.root, "..2026_01_01"), 0o755))
	f.must(os.WriteFile(filepath.Join(f.root, "..2026_01_01", "key"), []byte("value"), 0o644))
	f.must(os.Symlink("..2026_01_01", filepath.Join(f.root, "..data")))
	f.must(os.Symlink("..data/key", filepath.Join(f.root, "key")))
	f.must(os.MkdirAll(filepath.Join(f.root, "a", "b"), 0o755))
	f.must(os.Symlink(filepath.Join(f.root, "a"), filepath.Join(f.root, "abs-inside")))
	for i, tc := range []struct{ sub, want string }{
		{sub: "key", want: "..2026_01_01/key"},
		{sub: "abs-inside/b", want: "a/b"},
		{sub: "abs-inside/b/c", want: "a/b/c"},
	} {
		target, err := f.b.Bind(f.ctx, f.request(tc.sub, i))
		if err != nil {
			t.Fatalf("Bind(%q): %v", tc.sub, err)
		}
		if inode(t, target) != inode(t, filepath.Join(f.root, tc.want)) {
			t.Errorf("Bind(%q) at %q does not show %s", tc.sub, target, tc.want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(f.podDir, "volume-subpaths", "data", "app", "0")); err != nil || string(got) != "value" {
		t.Errorf("file bind reads %q, %v; want the key's value", got, err)
	}
}

// TestBindPinsTheCheckedInode: the path handed to the runtime is the bind,
// which keeps showing the directory that was checked after the subPath is
// swapped for a symlink to the host.
func TestBindPinsTheCheckedInode(t *testing.T) {
	f := newFixture(t)
	f.must(os.MkdirAll(filepath.Join(f.root, "a", "b"), 0o755))
	f.must(os.WriteFile(filepath.Join(f.root, "a", "b", "inside"), nil, 0o644))
	checked := inode(t, filepath.Join(f.root, "a", "b"))
	target, err := f.b.Bind(f.ctx, f.request("a/b", 0))
	f.must(err)
	if !strings.HasPrefix(target, filepath.Join(f.podDir, "volume-subpaths")+"/") {
		t.Fatalf("Bind = %q, not a bind under the pod's volume-subpaths", target)
	}
	// The sibling container's move, right after preparation.
	f.must(os.Rename(filepath.Join(f.root, "a"), filepath.Join(f.root, "a.old")))
	f.must(os.MkdirAll(filepath.Join(f.outside, "b"), 0o755))
	f.must(os.Symlink(f.outside, filepath.Join(f.root, "a")))
	if inode(t, target) != checked {
		t.Fatalf("after the swap %q no longer shows the checked directory", target)
	}
	if _, err := os.Stat(filepath.Join(target, "inside")); err != nil {
		t.Errorf("the bind lost the volume's content: %v", err)
	}
	if _, err := f.b.Bind(f.ctx, f.request("a/b", 1)); err == nil {
		t.Error("a new Bind through the swapped symlink succeeded")
	}
}

// TestBindKeepsOrReplaces: binding again keeps a bind of the same inode
// (a restarted berth, a re-created container) and replaces a stale one.
func TestBindKeepsOrReplaces(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.root, "d")
	f.must(os.Mkdir(dir, 0o755))
	target, err := f.b.Bind(f.ctx, f.request("d", 0))
	f.must(err)
	again, err := f.b.Bind(f.ctx, f.request("d", 0))
	f.must(err)
	if again != target || mountsUnder(t, target) != 1 {
		t.Fatalf("second Bind = %q with %d mounts, want %q with 1", again, mountsUnder(t, target), target)
	}
	f.must(os.Rename(dir, dir+".old"))
	f.must(os.Mkdir(dir, 0o755))
	_, err = f.b.Bind(f.ctx, f.request("d", 0))
	f.must(err)
	if inode(t, target) != inode(t, dir) || mountsUnder(t, target) != 1 {
		t.Errorf("the stale bind was not replaced: %d mounts", mountsUnder(t, target))
	}
}

func TestCleanPod(t *testing.T) {
	f := newFixture(t)
	f.must(os.MkdirAll(filepath.Join(f.root, "d"), 0o755))
	f.must(os.WriteFile(filepath.Join(f.root, "d", "keep"), []byte("data"), 0o644))
	f.must(os.WriteFile(filepath.Join(f.root, "file"), []byte("data"), 0o644))
	for i, sub := range []string{"d", "file"} {
		_, err := f.b.Bind(f.ctx, f.request(sub, i))
		f.must(err)
	}
	// Not berth's: a link to the host is removed, not followed.
	other := filepath.Join(f.podDir, "volume-subpaths", "data", "other")
	f.must(os.Mkdir(other, 0o750))
	f.must(os.Symlink(f.outside, filepath.Join(other, "0")))
	f.must(f.b.CleanPod(f.ctx, f.podDir))
	if n := mountsUnder(t, f.podDir); n != 0 {
		t.Errorf("%d mounts left under the pod directory", n)
	}
	if _, err := os.Lstat(filepath.Join(f.podDir, "volume-subpaths")); !os.IsNotExist(err) {
		t.Errorf("volume-subpaths left: %v", err)
	}
	for _, p := range []string{filepath.Join(f.root, "d", "keep"), filepath.Join(f.root, "file"), filepath.Join(f.outside, "marker")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("cleaning removed content: %v", err)
		}
	}
	f.must(f.b.CleanPod(f.ctx, f.podDir)) // nothing left: no error
}

// TestCleanPodKeepsWhatItCannotUnmount: a bind point that is not empty
// after unmounting fails the clean and keeps its content.
func TestCleanPodKeepsWhatItCannotUnmount(t *testing.T) {
	f := newFixture(t)
	stuck := filepath.Join(f.podDir, "volume-subpaths", "data", "app", "0")
	f.must(os.MkdirAll(stuck, 0o750))
	f.must(os.WriteFile(filepath.Join(stuck, "precious"), nil, 0o644))
	if err := f.b.CleanPod(f.ctx, f.podDir); err == nil {
		t.Fatal("CleanPod succeeded over a non-empty bind point")
	}
	if _, err := os.Stat(filepath.Join(stuck, "precious")); err != nil {
		t.Errorf("CleanPod removed content under a bind point: %v", err)
	}
	f.must(os.Remove(filepath.Join(stuck, "precious")))
}

// TestBindUnderSwapNeverShowsTheHost: while a sibling swaps the subPath
// directory and a symlink to the host back and forth, every Bind either
// fails or binds the volume's directory.
func TestBindUnderSwapNeverShowsTheHost(t *testing.T) {
	f := newFixture(t)
	dir, link := filepath.Join(f.root, "d"), filepath.Join(f.root, "swap")
	f.must(os.Mkdir(dir, 0o755))
	f.must(os.Symlink(f.outside, link))
	inside := inode(t, dir)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_ = unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
				runtime.Gosched()
			}
		}
	}()
	bound := 0
	for i := range 100 {
		target, err := f.b.Bind(f.ctx, f.request("d", i))
		if err != nil {
			continue
		}
		bound++
		if got := inode(t, target); got != inside {
			t.Errorf("bind %d shows inode %v, not the volume's directory %v", i, got, inside)
		}
	}
	close(stop)
	<-done
	t.Logf("%d of 100 binds succeeded under the swap", bound)
}

// TestBindCreateUnderSwapNeverCreatesOutside: while a sibling plants and
// removes a symlink to the host where a missing subPath directory is to be
// created, Bind never creates anything in the host directory.
func TestBindCreateUnderSwapNeverCreatesOutside(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(f.root, "a")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_ = os.Symlink(f.outside, link)
				_ = os.RemoveAll(link) // a link or an empty directory Bind made: never followed
			}
		}
	}()
	bound := 0
	for i := range 500 {
		if _, err := f.b.Bind(f.ctx, f.request("a/new", i)); err == nil {
			bound++
		}
		if _, err := os.Lstat(filepath.Join(f.outside, "new")); !os.IsNotExist(err) {
			t.Errorf("bind %d created a directory in the host directory: %v", i, err)
			break
		}
	}
	close(stop)
	<-done
	t.Logf("%d of 500 binds succeeded under the swap", bound)
}

// TestMakeDirsAfterAPlantedSymlink is the creation race made
// deterministic: resolve found "a" missing, then a sibling planted a
// symlink to the host there before the directories were created. Nothing
// may be created outside the volume, and the creation is refused.
func TestMakeDirsAfterAPlantedSymlink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(dir, "volume"), filepath.Join(dir, "host")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	existing, missing, err := resolve(root, "a/new")
	if err != nil || existing != root || len(missing) != 2 {
		t.Fatalf("resolve = %q, %q, %v; want the root and two missing components", existing, missing, err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	parent, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := makeDirs(parent, existing, missing, 0o755, "a/new"); err == nil {
		h.Close()
		t.Error("makeDirs created the subPath through a planted symlink")
	}
	if _, err := os.Lstat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("makeDirs created a directory in the host directory: %v", err)
	}
}
