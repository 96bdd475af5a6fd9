package atomicwriter

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPlan feeds Compute item paths for the new payload and paths of an
// old one (read from disk, so anything a directory can hold) and checks
// that no plan ever names a path outside the volume directory or one of
// the writer's own names, and that every accepted path is used in one
// clean, local form.
func FuzzPlan(f *testing.F) {
	f.Add("a", "dir/b", "c")
	f.Add("./..data", "a", "..data")
	f.Add("a/../../x", "/etc/passwd", "../x")
	f.Add(".", "./", "..2026_11_22_20_00_00.1")
	f.Fuzz(func(t *testing.T, p1, p2, oldPath string) {
		old := Payload{oldPath: {Data: []byte("old")}, "kept": {}}
		next := Payload{p1: {Data: []byte("1")}, p2: {Data: []byte("2")}}
		plan, err := Compute(old, next)
		if err != nil {
			return
		}
		for _, name := range append(append([]string{}, plan.Visible...), plan.Remove...) {
			if !filepath.IsLocal(name) || strings.Contains(name, "/") || strings.HasPrefix(name, "..") || name == "." {
				t.Errorf("plan names %q (paths %q, %q, old %q)", name, p1, p2, oldPath)
			}
		}
		clean, err := Normalize(next)
		if err != nil {
			t.Fatalf("Compute accepted what Normalize refuses: %v", err)
		}
		for p := range clean {
			if !filepath.IsLocal(p) || filepath.Clean(p) != p || strings.HasPrefix(p, "..") {
				t.Errorf("normalized path %q (from %q, %q) is not clean, local and unreserved", p, p1, p2)
			}
		}
	})
}
