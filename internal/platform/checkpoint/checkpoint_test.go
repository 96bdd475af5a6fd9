package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := Read(dir, "state"); found || err != nil {
		t.Fatalf("Read of a missing file = %t, %v", found, err)
	}
	if err := Write(dir, "state", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, "state", []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, found, err := Read(dir, "state")
	if err != nil || !found || string(b) != "two" {
		t.Errorf("Read = %q, %t, %v; want the last write", b, found, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want the file alone (no temporary left)", len(entries))
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, MaxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(dir, "big"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Read of an oversized file = %v, want it refused", err)
	}
}

// TestHash pins the FNV-32a of a known text.
func TestHash(t *testing.T) {
	if got := Hash("a"); got != 0xe40c292c {
		t.Errorf("Hash(a) = %#x, want FNV-32a's 0xe40c292c", got)
	}
}

func TestLoadStore(t *testing.T) {
	dir := t.TempDir()
	encode := func(s string) ([]byte, error) { return []byte(s), nil }
	decode := func(b []byte) (string, error) {
		if string(b) == "bad" {
			return "", os.ErrInvalid
		}
		return string(b), nil
	}
	if _, found, err := Load(dir, "state", decode); found || err != nil {
		t.Fatalf("Load of a missing file = %t, %v", found, err)
	}
	if err := Store(dir, "state", "ok", encode); err != nil {
		t.Fatal(err)
	}
	if c, found, err := Load(dir, "state", decode); c != "ok" || !found || err != nil {
		t.Errorf("Load = %q, %t, %v; want what Store wrote", c, found, err)
	}
	if err := Store(dir, "state", "bad", encode); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir, "state", decode); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "state")) {
		t.Errorf("Load of an undecodable file = %v, want an error naming it", err)
	}
}
