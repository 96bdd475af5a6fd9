package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goFileName is a file name a package comment mentions: a bare name (no
// directory; upstream files are named with their path, such as
// pkg/kubelet/pleg/generic.go, and are not checked).
var goFileName = regexp.MustCompile(`(?:^|[\s(` + "`" + `,])([a-z][a-z0-9_]*\.go)\b`)

// TestDocFileMaps holds STYLE rule 12's file maps to the tree: every
// package under internal/ and cmd/ has a doc.go with a package comment,
// and every file a doc.go names by a bare name exists in its package (or,
// named as sub/file.go, in a package below it).
func TestDocFileMaps(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
			if len(goFiles) == 0 {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			doc := filepath.Join(path, "doc.go")
			f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				if os.IsNotExist(err) && allTests(goFiles) {
					return nil
				}
				t.Errorf("%s: no doc.go saying what the package owns (STYLE rule 12): %v", rel, err)
				return nil
			}
			if f.Doc == nil {
				t.Errorf("%s/doc.go has no package comment", rel)
				return nil
			}
			for _, m := range goFileName.FindAllStringSubmatch(f.Doc.Text(), -1) {
				if _, err := os.Stat(filepath.Join(path, m[1])); err != nil {
					t.Errorf("%s/doc.go names %s, which is not in the package: update the file map", rel, m[1])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func allTests(files []string) bool {
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return false
		}
	}
	return true
}
