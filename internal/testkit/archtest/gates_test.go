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

// TestDefaultsInConfig holds the other half of "config resolved once": no
// code outside internal/config restates a KubeletConfiguration default as
// ptr.Deref(kc.Field, default); it reads config.Config.Settings, where
// the defaults are upstream's (SetDefaults). The KubeletConfiguration is
// recognised as berth's code names it: kc, or a .Kubelet field.
func TestDefaultsInConfig(t *testing.T) {
	for _, f := range sourceFiles(t, parser.SkipObjectResolution, "internal", "cmd") {
		if f.test || strings.HasPrefix(f.rel, "internal/config/") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if fn, ok := call.Fun.(*ast.SelectorExpr); !ok || fn.Sel.Name != "Deref" || !isIdent(fn.X, "ptr") {
				return true
			}
			if arg := exprText(call.Args[0]); strings.HasPrefix(arg, "kc.") || strings.Contains(arg, "Kubelet.") {
				t.Errorf("%s restates the default of %s: read config.Config.Settings", f.fset.Position(call.Pos()), arg)
			}
			return true
		})
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// exprText is a selector chain as written (a.b.c); other expressions are "".
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x := exprText(e.X); x != "" {
			return x + "." + e.Sel.Name
		}
	}
	return ""
}
