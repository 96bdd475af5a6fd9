package archtest

import (
	"go/parser"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/berthk8s/berth"

// goFile is one Go file of the module: its directory relative to the
// module root, whether it is a test, and its imports of internal/.
type goFile struct {
	path, dir string
	test      bool
	internal  []string // import paths below internal/, without the prefix
}

// moduleFiles is every Go file under tops with its imports of internal/.
func moduleFiles(t *testing.T, tops ...string) []goFile {
	t.Helper()
	var files []goFile
	for _, sf := range sourceFiles(t, parser.ImportsOnly, tops...) {
		g := goFile{path: sf.rel, dir: pathpkg.Dir(sf.rel), test: sf.test}
		for _, imp := range sf.ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, module+"/internal/"); ok {
				g.internal = append(g.internal, rest)
			}
		}
		files = append(files, g)
	}
	return files
}

// wingOf is the wing of a path below internal/: its first element.
func wingOf(below string) string {
	w, _, _ := strings.Cut(below, "/")
	return w
}

func wingRule(name string) (Wing, bool) {
	i := slices.IndexFunc(Wings, func(w Wing) bool { return w.Name == name })
	if i < 0 {
		return Wing{}, false
	}
	return Wings[i], true
}

// TestWingsForbidCycles holds the table itself: a wing may import only
// wings listed before it, so no two wings can import each other.
func TestWingsForbidCycles(t *testing.T) {
	for i, w := range Wings {
		for _, m := range w.May {
			j := slices.IndexFunc(Wings, func(o Wing) bool { return o.Name == m })
			if j < 0 || j >= i {
				t.Errorf("wing %s may import %s, which is not a wing listed before it", w.Name, m)
			}
		}
	}
}

// TestWingImports holds STYLE rule 19: every package lives in a known
// wing, every wing has a doc.go, and every import between wings is one
// the table allows.
func TestWingImports(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("internal/%s: only wings belong directly in internal/", e.Name())
			continue
		}
		if _, ok := wingRule(e.Name()); !ok {
			t.Errorf("internal/%s is no wing of archtest.Wings: put the package in a wing, or add the wing with its rules", e.Name())
		}
		if _, err := os.Stat(filepath.Join("..", "..", e.Name(), "doc.go")); err != nil {
			t.Errorf("wing internal/%s has no doc.go saying what it owns and may import", e.Name())
		}
	}
	for _, f := range moduleFiles(t, "internal", "cmd") {
		from, inInternal := strings.CutPrefix(f.dir, "internal/")
		if f.dir == "internal" {
			continue
		}
		for _, imp := range f.internal {
			to := wingOf(imp)
			if msg := importProblem(f, inInternal, wingOf(from), to); msg != "" {
				t.Errorf("%s imports internal/%s: %s", f.path, imp, msg)
			}
		}
	}
}

// importProblem says why a file of wing from (or of cmd/, when it is not
// below internal/) may not import wing to, or "" when it may.
func importProblem(f goFile, inInternal bool, from, to string) string {
	switch {
	case !inInternal:
		if f.test || slices.Contains(CmdMay, to) {
			return ""
		}
		return "cmd/ may import only " + strings.Join(CmdMay, ", ")
	case from == to:
		return ""
	case to == "app":
		return "nothing imports the wiring"
	case f.test:
		return ""
	case to == "testkit":
		return "testkit is for tests only"
	}
	w, _ := wingRule(from)
	if slices.Contains(w.May, to) {
		return ""
	}
	if len(w.May) == 0 {
		return "wing " + from + " imports no other wing"
	}
	return "wing " + from + " may import only " + strings.Join(w.May, ", ")
}
