package nodestatus

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPureFilesImports holds the line for the pure part of the package:
// the setters, InitialNode, StatusChanged and StatusPatch import no API
// client, gRPC, HTTP or process package and never read the clock. Only controller.go and lease.go
// talk to the API server.
func TestPureFilesImports(t *testing.T) {
	pure := []string{"inputs.go", "setters.go", "allocatable.go", "conditions.go", "initial.go", "patch.go"}
	forbidden := []string{"google.golang.org/grpc", "k8s.io/client-go", "net/http", "os/exec", "k8s.io/kubernetes"}
	for _, name := range pure {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "time.Now(") {
			t.Errorf("%s reads the clock: the time comes in Inputs", name)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
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
