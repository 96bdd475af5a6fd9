package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the module's root, seen from this package's directory.
var moduleRoot = filepath.Join("..", "..", "..")

// sourceFile is one parsed Go file of the module.
type sourceFile struct {
	rel  string // slash-separated, relative to the module root
	test bool
	fset *token.FileSet
	ast  *ast.File
}

// sourceFiles parses every Go file below the module's top-level
// directories tops (testdata and hidden directories skipped) with mode.
func sourceFiles(t *testing.T, mode parser.Mode, tops ...string) []sourceFile {
	t.Helper()
	var files []sourceFile
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(moduleRoot, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, mode)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(moduleRoot, path)
			files = append(files, sourceFile{rel: filepath.ToSlash(rel), test: strings.HasSuffix(path, "_test.go"), fset: fset, ast: f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	return files
}
