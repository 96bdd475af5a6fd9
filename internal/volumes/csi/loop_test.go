package csi

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLoopAttachDetach: attachLoop attaches one loop device to a file
// (twice is once), findLoops finds it by the file's device and inode,
// detachLoop detaches it; a missing file is nothing to detach. Needs root
// and loop devices.
func TestLoopAttachDetach(t *testing.T) {
	if _, err := os.Stat(loopControl); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and " + loopControl)
	}
	file := filepath.Join(t.TempDir(), "backing")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 1<<20); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = detachLoop(file) })
	for range 2 {
		if err := attachLoop(file); err != nil {
			t.Fatal(err)
		}
	}
	loops, err := findLoops(st.Dev, st.Ino)
	if err != nil || len(loops) != 1 {
		t.Fatalf("findLoops = %v, %v; want one loop device", loops, err)
	}
	if err := detachLoop(file); err != nil {
		t.Fatal(err)
	}
	if loops, err := findLoops(st.Dev, st.Ino); err != nil || len(loops) != 0 {
		t.Errorf("findLoops after detach = %v, %v; want none", loops, err)
	}
	if err := detachLoop(filepath.Join(t.TempDir(), "missing")); err != nil {
		t.Errorf("detachLoop of a missing file: %v", err)
	}
}
