package admission

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports holds the line for a pure package: no gRPC, no API clients,
// no HTTP, no processes, no k8s.io/component-helpers. (k8s.io/api pulls
// net/http in transitively; only direct imports are checked.)
func TestImports(t *testing.T) {
	forbidden := []string{"google.golang.org/grpc", "k8s.io/client-go", "net/http", "os/exec", "k8s.io/kubernetes", "k8s.io/component-helpers"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
