package archtest

import (
	"go/ast"
	"go/parser"
	"strings"
	"testing"
)

// TestGatesReadInConfig holds issue #23's "config resolved once": code
// outside internal/config never reads the KubeletConfiguration's
// featureGates map (by name or whole); it asks the Config's typed methods,
// which resolve each gate once against upstream's defaults. Only passing
// the resolved gate set to a library (Config.FeatureGates, a method) is
// allowed.
func TestGatesReadInConfig(t *testing.T) {
	for _, f := range sourceFiles(t, parser.SkipObjectResolution, "internal", "cmd") {
		if f.test || strings.HasPrefix(f.rel, "internal/config/") {
			continue
		}
		calls := map[ast.Expr]bool{}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				calls[c.Fun] = true
			}
			return true
		})
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "FeatureGates" && !calls[sel] {
				t.Errorf("%s reads featureGates: ask a config.Config method that resolves the gate", f.fset.Position(sel.Pos()))
			}
			return true
		})
	}
}
