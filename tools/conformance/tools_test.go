package conformance

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestToolsImportsE2ETestImports pins tools.go to upstream: every module
// that test/e2e's test files import must be in go.mod and go.sum, and go
// mod tidy records them only through tools.go's imports. A new release
// that adds a suite to e2e_test.go fails here until tools.go imports it.
func TestToolsImportsE2ETestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("find k8s.io/kubernetes: %v", err)
	}
	e2eDir := filepath.Join(strings.TrimSpace(string(out)), "test", "e2e")
	have := imports(t, "tools.go")
	files, err := filepath.Glob(filepath.Join(e2eDir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s: %v", e2eDir, err)
	}
	for _, f := range files {
		for path := range imports(t, f) {
			if isStd(path) {
				continue
			}
			if !have[path] {
				t.Errorf("%s imports %q; tools.go does not", filepath.Base(f), path)
			}
		}
	}
}

func imports(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	paths := make(map[string]bool)
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatalf("import path in %s: %v", file, err)
		}
		paths[p] = true
	}
	return paths
}

// isStd reports a standard library path: no dot in its first element.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
