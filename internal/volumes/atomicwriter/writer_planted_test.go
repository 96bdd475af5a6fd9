package atomicwriter

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// These tests plant in a volume directory what a container with write
// access to it could, and check that the next Write neither reads, changes
// nor removes anything outside the directory. The writer recovers from a
// planted ..data symlink by replacing it (see Write).

// snapshot records every entry below dir: its type, mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] += " " + string(data)
		}
		return nil
	})
	if err != nil {
		out["<error>"] = err.Error()
	}
	return out
}

// outsideDir makes a host directory the writer must never touch. It holds
// exactly the files of the next payload, so that a writer that read it as
// its current version would see no change and write nothing.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{"a": "new", "sub/b": "2"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustReplace(t *testing.T, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func relTo(t *testing.T, from, to string) string {
	t.Helper()
	rel, err := filepath.Rel(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestWriteIgnoresPlantedSymlinks(t *testing.T) {
	first := Payload{"a": {Data: []byte("1"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o644}, "c": {Data: []byte("3"), Mode: 0o644}}
	next := Payload{"a": {Data: []byte("new"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o644}}
	tests := []struct {
		name  string
		plant func(t *testing.T, dir, outside, version string)
	}{
		{name: "..data absolute to outside", plant: func(t *testing.T, dir, outside, _ string) {
			mustReplace(t, outside, filepath.Join(dir, DataDirName))
		}},
		{name: "..data relative to outside", plant: func(t *testing.T, dir, outside, _ string) {
			mustReplace(t, relTo(t, dir, outside), filepath.Join(dir, DataDirName))
		}},
		{name: "..data to a version-named symlink to outside", plant: func(t *testing.T, dir, outside, _ string) {
			mustReplace(t, outside, filepath.Join(dir, "..2020_01_01_00_00_00.1"))
			mustReplace(t, "..2020_01_01_00_00_00.1", filepath.Join(dir, DataDirName))
		}},
		{name: "version directory absolute to outside", plant: func(t *testing.T, dir, outside, version string) {
			mustReplace(t, outside, filepath.Join(dir, version))
		}},
		{name: "version directory relative to outside", plant: func(t *testing.T, dir, outside, version string) {
			mustReplace(t, relTo(t, dir, outside), filepath.Join(dir, version))
		}},
		{name: "kept top-level name to outside", plant: func(t *testing.T, dir, outside, _ string) {
			mustReplace(t, filepath.Join(outside, "a"), filepath.Join(dir, "a"))
			mustReplace(t, relTo(t, dir, filepath.Join(outside, "sub")), filepath.Join(dir, "sub"))
		}},
		{name: "dropped top-level name to outside", plant: func(t *testing.T, dir, outside, _ string) {
			mustReplace(t, outside, filepath.Join(dir, "c"))
		}},
	}
	// next equals the outside directory, so a writer reading it as its
	// version writes nothing; other differs, so such a writer would go on to
	// remove what it read.
	other := Payload{"a": {Data: []byte("other"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o644}}
	for _, tc := range tests {
		for pname, payload := range map[string]Payload{"same as outside": next, "differs from outside": other} {
			t.Run(tc.name+"/"+pname, func(t *testing.T) {
				dir, outside := t.TempDir(), outsideDir(t)
				if _, err := Write(dir, first, t0, nil); err != nil {
					t.Fatal(err)
				}
				version, err := os.Readlink(filepath.Join(dir, DataDirName))
				if err != nil {
					t.Fatal(err)
				}
				tc.plant(t, dir, outside, version)
				before := snapshot(t, outside)

				changed, err := Write(dir, payload, t0.Add(time.Minute), nil)
				if diff := cmp.Diff(before, snapshot(t, outside)); diff != "" {
					t.Errorf("outside directory changed (-before +after):\n%s", diff)
				}
				if err != nil || !changed {
					t.Fatalf("Write() = %v, %v; want true, nil", changed, err)
				}
				assertOnlyVersion(t, dir, payload)
			})
		}
	}
}

// assertOnlyVersion checks that dir holds exactly one version, the one
// ..data points at, with the content of want, and the visible links.
func assertOnlyVersion(t *testing.T, dir string, want Payload) {
	t.Helper()
	got, err := ReadPayload(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("current version (-want +got):\n%s", diff)
	}
	version, _ := os.Readlink(filepath.Join(dir, DataDirName))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if target, _ := os.Readlink(filepath.Join(dir, e.Name())); target != DataDirName+"/"+e.Name() {
			t.Errorf("visible %q -> %q, want %q", e.Name(), target, DataDirName+"/"+e.Name())
		}
	}
	if diff := cmp.Diff([]string{version, DataDirName, "a", "sub"}, names); diff != "" {
		t.Errorf("directory entries (-want +got):\n%s", diff)
	}
}

func TestWriteRefusesDataDirThatIsNoSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, DataDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Write(dir, Payload{"a": {Data: []byte("1")}}, t0, nil)
	if err == nil || !strings.Contains(err.Error(), "not a symlink") {
		t.Fatalf("Write() error = %v, want one saying ..data is not a symlink", err)
	}
}
