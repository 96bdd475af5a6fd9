package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"strings"
	"testing"
)

// The limits of STYLE rule 10: files at most 800 lines (tests too);
// functions at most 100 lines and structs at most 20 fields in non-test
// code.
const (
	maxFileLines = 800
	maxFuncLines = 100
	maxFields    = 20
	// maxWiringFields holds the wiring to issue #23's bar: no struct of
	// internal/app over 12 fields (no everything-struct).
	maxWiringFields = 12
)

// oversize are the exceptions, each with its size today: a test fails when
// one grows, and when one shrinks under its limit (so the list only
// shrinks). Keys are "path:Name" (a function, or the type a struct
// declares).
var oversize = map[string]int{
	// Tables: one line per KubeletConfiguration field and per flag.
	"internal/config/support.go:kubeletFieldSupport": 130,
	"internal/config/configflags.go:configFlags":     112,
	// The configuration itself: one field per setting.
	"internal/config/config.go:Config": 24,
	// The runtime manager's config and the node status inputs: to split
	// by concern (issue #23).
	"internal/pod/kuberuntime/manager.go:Config":   30,
	"internal/cluster/nodestatus/inputs.go:Inputs": 28,
}

// TestSizes holds STYLE rule 10 over internal/ and cmd/.
func TestSizes(t *testing.T) {
	seen := map[string]bool{}
	check := func(key string, size, limit int, what string) {
		max, excepted := oversize[key]
		switch {
		case excepted:
			seen[key] = true
			if size > max {
				t.Errorf("%s has grown to %d %s (its exception allows %d): split it", key, size, what, max)
			} else if size <= limit {
				t.Errorf("%s is %d %s now, within the limit of %d: remove its exception", key, size, what, limit)
			} else if size < max {
				t.Errorf("%s shrank to %d %s: lower its exception from %d", key, size, what, max)
			}
		case size > limit:
			t.Errorf("%s has %d %s, over the limit of %d (STYLE rule 10): split it", key, size, what, limit)
		}
	}
	for _, f := range sourceFiles(t, parser.SkipObjectResolution, "internal", "cmd") {
		check(f.rel, f.fset.File(f.ast.Pos()).LineCount(), maxFileLines, "lines")
		if f.test {
			continue
		}
		lines := func(n ast.Node) int { return f.fset.Position(n.End()).Line - f.fset.Position(n.Pos()).Line + 1 }
		for _, decl := range f.ast.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Body != nil {
					check(f.rel+":"+funcName(decl), lines(decl), maxFuncLines, "lines")
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							limit := maxFields
							if strings.HasPrefix(f.rel, "internal/app/") {
								limit = maxWiringFields
							}
							check(f.rel+":"+ts.Name.Name, fields(st), limit, "fields")
						}
					}
				}
			}
		}
	}
	for key := range oversize {
		if !seen[key] {
			t.Errorf("exception %s matches nothing: remove it", key)
		}
	}
}

// funcName is a function's name, with its receiver's type for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	return fmt.Sprintf("%s.%s", t, d.Name.Name)
}

// fields counts a struct's fields, each name of a shared line apart.
func fields(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}
