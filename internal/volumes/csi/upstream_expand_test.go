package csi

import (
	"go/ast"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestExpandMessagesMatchUpstream pins Expand's messages to the literals
// of upstream's nodeExpandWithClient (berth wraps with %w where upstream
// formats with %v).
func TestExpandMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func(upCSI, "nodeExpandWithClient").StringLiterals()
	for _, msg := range []string{msgExpandCaps, msgExpandNotSupport, msgExpandSecret, msgExpandFailed, msgExpandInfeasible} {
		if up, as := strings.ReplaceAll(msg, "%w", "%v"), msg; !slices.Contains(lits, up) && !slices.Contains(lits, as) {
			t.Errorf("upstream's nodeExpandWithClient has no literal %q", up)
		}
	}
}

// TestExpandCodesMatchUpstream: the driver's codes that make an
// expansion infeasible are upstream's isInfeasibleError's, and the one
// that says the volume is in use is inUseError's.
func TestExpandCodesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	infeasible := map[string]bool{}
	ast.Inspect(src.Func(upCSI, "isInfeasibleError").Node, func(n ast.Node) bool {
		if cc, ok := n.(*ast.CaseClause); ok {
			for _, e := range cc.List {
				infeasible[e.(*ast.SelectorExpr).Sel.Name] = true
			}
		}
		return true
	})
	inUse := map[string]bool{}
	ast.Inspect(src.Func(upCSI, "inUseError").Node, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "codes" {
				inUse[sel.Sel.Name] = true
			}
		}
		return true
	})
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		got := FailureOf(expandError(status.Error(c, "x")))
		want := ExpandFailed
		switch {
		case inUse[c.String()]:
			want = ExpandInUse
		case infeasible[c.String()]:
			want = ExpandInfeasible
		}
		if got != want {
			t.Errorf("code %v: failure %v, upstream's %v", c, got, want)
		}
	}
}
