package atomicwriter

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)

// readVisible reads the user-visible files of dir through their symlinks.
func readVisible(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Name()[0] == '.' {
			continue
		}
		if e.Type()&os.ModeSymlink == 0 {
			t.Errorf("%s is not a symlink", e.Name())
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func TestWriteSwapsVersions(t *testing.T) {
	dir := t.TempDir()
	first := Payload{"a": {Data: []byte("1"), Mode: 0o600}, "b": {Data: []byte("2"), Mode: 0o644}}
	changed, err := Write(dir, first, t0, nil)
	if err != nil || !changed {
		t.Fatalf("first Write() = %v, %v; want true, nil", changed, err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, readVisible(t, dir)); diff != "" {
		t.Errorf("first version (-want +got):\n%s", diff)
	}
	info, err := os.Stat(filepath.Join(dir, "a"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode of a = %v, %v; want 0600", info.Mode(), err)
	}
	oldTarget, _ := os.Readlink(filepath.Join(dir, DataDirName))

	changed, err = Write(dir, first, t0.Add(time.Minute), nil)
	if err != nil || changed {
		t.Fatalf("same Write() = %v, %v; want false, nil", changed, err)
	}

	var sawNew bool
	second := Payload{"a": {Data: []byte("new"), Mode: 0o644}, "c": {Data: []byte("3"), Mode: 0o644}}
	changed, err = Write(dir, second, t0.Add(time.Minute), func(version *os.Root) error {
		// Before the swap, readers still see the whole old version.
		if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, readVisible(t, dir)); diff != "" {
			t.Errorf("old version during write (-want +got):\n%s", diff)
		}
		target, _ := os.Readlink(filepath.Join(dir, DataDirName))
		sawNew = target == filepath.Base(version.Name())
		return nil
	})
	if err != nil || !changed {
		t.Fatalf("second Write() = %v, %v; want true, nil", changed, err)
	}
	if sawNew {
		t.Error("..data pointed at the new version before it was complete")
	}
	newTarget, _ := os.Readlink(filepath.Join(dir, DataDirName))
	if newTarget == oldTarget {
		t.Errorf("..data still points at %q", oldTarget)
	}
	if diff := cmp.Diff(map[string]string{"a": "new", "c": "3"}, readVisible(t, dir)); diff != "" {
		t.Errorf("second version (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, oldTarget)); !os.IsNotExist(err) {
		t.Errorf("old version directory %q still exists: %v", oldTarget, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{newTarget, DataDirName, "a", "c"}, names); diff != "" {
		t.Errorf("directory entries (-want +got):\n%s", diff)
	}
}

func TestWriteNested(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, Payload{"x/y/z": {Data: []byte("deep"), Mode: 0o644}}, t0, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "x", "y", "z"))
	if err != nil || string(data) != "deep" {
		t.Errorf("read x/y/z = %q, %v", data, err)
	}
	got, err := ReadPayload(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Payload{"x/y/z": {Data: []byte("deep"), Mode: 0o644}}, got); diff != "" {
		t.Errorf("ReadPayload (-want +got):\n%s", diff)
	}
}

// TestWriteConcurrentReader swaps between two versions while a reader
// reads both files through ..data: it must always see one whole version.
func TestWriteConcurrentReader(t *testing.T) {
	dir := t.TempDir()
	version := func(n int) Payload {
		s := fmt.Sprint(n)
		return Payload{"a": {Data: []byte(s), Mode: 0o644}, "b": {Data: []byte(s), Mode: 0o644}}
	}
	if _, err := Write(dir, version(0), t0, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	mixed := make(chan string, 1)
	go func() {
		defer close(mixed)
		for {
			select {
			case <-done:
				return
			default:
			}
			// Resolve ..data once, as a reader holding the directory open does.
			target, err := os.Readlink(filepath.Join(dir, DataDirName))
			if err != nil {
				continue
			}
			a, errA := os.ReadFile(filepath.Join(dir, target, "a"))
			b, errB := os.ReadFile(filepath.Join(dir, target, "b"))
			if errA != nil || errB != nil {
				continue // the version was removed after the swap; retry
			}
			if string(a) != string(b) {
				mixed <- fmt.Sprintf("a=%s b=%s", a, b)
				return
			}
		}
	}()
	for i := 1; i <= 200; i++ {
		if _, err := Write(dir, version(i), t0, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if m, ok := <-mixed; ok {
		t.Errorf("reader saw a mixed set: %s", m)
	}
}

// TestWriteDotSlashDataItem writes and then drops an item "./..data" (the
// API server accepts it): the writer must refuse it, and the live ..data
// link must stay.
func TestWriteDotSlashDataItem(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, Payload{"a": {Data: []byte("1")}}, t0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Payload{"a": {Data: []byte("1")}, "./..data": {Data: []byte("x")}}, t0, nil); err == nil {
		t.Fatal(`Write() of item "./..data" succeeded, want an error`)
	}
	if _, err := Write(dir, Payload{"b": {Data: []byte("2")}}, t0, nil); err != nil {
		t.Fatal(err)
	}
	if got := readVisible(t, dir); !cmp.Equal(got, map[string]string{"b": "2"}) {
		t.Errorf("visible files = %v, want b=2", got)
	}
}
