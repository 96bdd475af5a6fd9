package stats

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/volumes/volume"
)

// TestVolumeWalkResumes (issue #26, finding 1): a volume with more inodes
// than a pass counts is not published as holding that many: each pass
// goes on where the last stopped, what is published until the walk is
// done is at least what was counted (a lower bound for eviction), and
// once it is done the whole tree is counted; a new walk in progress
// never publishes less than the last complete one.
func TestVolumeWalkResumes(t *testing.T) {
	pods := t.TempDir()
	vol := filepath.Join(pods, "uid1", "volumes", volume.KindEmptyDir.PluginDir(), "fill")
	for i := range 30 {
		mkfile(t, filepath.Join(vol, "d", strings.Repeat("f", i+1)), 64<<10)
	}
	const total = 32 // fill, d and the 30 files
	c := &volumeCache{podsDir: pods, clock: testingclock.NewFakeClock(epoch), period: DefaultVolumeStatsAggPeriod, walkLimit: 10}
	used := func() (bytes, inodes uint64) {
		t.Helper()
		c.step(context.Background())
		vs := c.Volumes("uid1")
		if len(vs) != 1 {
			t.Fatalf("volumes %+v, want fill", vs)
		}
		return *vs[0].Stats.UsedBytes, *vs[0].Stats.InodesUsed
	}
	var inodes []uint64
	for range 4 {
		_, n := used()
		inodes = append(inodes, n)
	}
	// Pass 1 counts 10 entries (and the root), 2 and 3 ten more each, 4 the last.
	want := []uint64{11, 21, 31, total}
	for i := range want {
		if inodes[i] != want[i] {
			t.Fatalf("inodes published by pass %d: %d (all passes %v), want %d: each pass resumes the walk", i+1, inodes[i], inodes, want[i])
		}
	}
	if b, _ := used(); b < 30*64<<10 {
		t.Errorf("bytes %d once the walk is done, want at least the 30 files' 1.9 MiB", b)
	}
	// The next walk is in progress: its partial count does not replace
	// the last total.
	if _, n := used(); n != total {
		t.Errorf("inodes during the next walk %d, want the last total %d", n, total)
	}
}

// TestVolumeOnItsOwnFilesystem: a volume that is a filesystem of its own
// (a tmpfs) is not walked: its usage is what statfs says, whatever its
// size. Needs a tmpfs mount (root).
func TestVolumeOnItsOwnFilesystem(t *testing.T) {
	pods := t.TempDir()
	vol := filepath.Join(pods, "uid1", "volumes", volume.KindSecret.PluginDir(), "creds")
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", vol, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(vol, 0) })
	mkfile(t, filepath.Join(vol, "token"), 1<<20)
	c := &volumeCache{podsDir: pods, clock: testingclock.NewFakeClock(epoch), period: DefaultVolumeStatsAggPeriod, walkLimit: 1}
	c.step(context.Background())
	vs := c.Volumes("uid1")
	if len(vs) != 1 || *vs[0].Stats.UsedBytes < 1<<20 || *vs[0].Stats.CapacityBytes != 4<<20 {
		t.Fatalf("tmpfs volume %+v, want its 1 MiB of 4 MiB from statfs", vs)
	}
	if len(c.walks) != 0 {
		t.Errorf("walks %v: a tmpfs volume was walked", c.walks)
	}
}

// mkchain makes depth nested directories "d" below dir, with a file at
// the bottom, and returns the bottom directory.
func mkchain(t *testing.T, dir string, depth int) string {
	t.Helper()
	p := dir
	for range depth {
		p = filepath.Join(p, "d")
	}
	mkfile(t, filepath.Join(p, "f"), 1)
	return p
}

// TestDuDeepChainBoundedDescriptors (issue #26, finding 2): a chain of
// directories deeper than the descriptors berth may open is walked
// whole: the walk holds at most maxOpenDirs+1 directories open. With
// fewer descriptors left than the chain is deep, a walk that holds one a
// level runs out and stops counting.
func TestDuDeepChainBoundedDescriptors(t *testing.T) {
	const depth = 300
	dir := t.TempDir()
	mkchain(t, dir, depth)
	f, err := openBeneath(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Leave the test 64 descriptors beyond those open now.
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(fds)) + 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	bytes, inodes, err := duFd(f)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("du: %v", err)
	}
	if inodes != depth+2 { // the root, the chain, the file
		t.Errorf("inodes = %d, want %d: the walk ran out of descriptors", inodes, depth+2)
	}
	if bytes == 0 {
		t.Error("no bytes counted")
	}
}

// TestDuTreeMovedEndsWalk: a directory moved while the walk was below it
// (its ".." is another directory) ends the walk: its count so far stands
// as a lower bound and no directory outside the volume is read.
func TestDuTreeMovedEndsWalk(t *testing.T) {
	dir := t.TempDir()
	vol := filepath.Join(dir, "vol")
	mkchain(t, vol, 2*maxOpenDirs+4)
	if err := os.Mkdir(filepath.Join(vol, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := openBeneath(vol, ".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := newWalk(f)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Walk down to the bottom: the shallow levels are closed by then.
	for !w.done() && len(w.stack) < 2*maxOpenDirs+4 {
		w.run(1)
	}
	if w.stack[2].fd >= 0 {
		t.Fatalf("level 2 still open at depth %d", len(w.stack))
	}
	// Move level 2 (vol/d/d) below vol/elsewhere: its ".." changes.
	if err := os.Rename(filepath.Join(vol, "d", "d"), filepath.Join(vol, "elsewhere", "d")); err != nil {
		t.Fatal(err)
	}
	w.run(^uint64(0))
	if !w.done() || w.err != errTreeMoved {
		t.Errorf("walk after the move: done %v, err %v; want it ended with errTreeMoved", w.done(), w.err)
	}
}

// TestDuResumesInsideADirectory: a walk stopped in the middle of a
// directory goes on after the entry it last counted: every entry once.
func TestDuResumesInsideADirectory(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		mkfile(t, filepath.Join(dir, "a", strings.Repeat("f", i+1)), 1)
		mkfile(t, filepath.Join(dir, "b", "c", strings.Repeat("g", i+1)), 1)
	}
	f, err := openBeneath(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := newWalk(f)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	steps := 0
	for !w.run(7) {
		steps++
	}
	if w.inodes != 1+3+100 || w.err != nil { // root, a, b, c, the files
		t.Errorf("inodes %d (err %v) after %d steps, want 104", w.inodes, w.err, steps)
	}
}
