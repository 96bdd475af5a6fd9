package stats

import (
	"go/ast"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestResourceMetricsMatchUpstream pins every /metrics/resource metric
// (name, help, labels, stability, deprecation) to upstream's
// pkg/kubelet/metrics/collectors/resource_metrics.go: each NewDesc call
// there is a row of resourceDefs, and the other way round.
func TestResourceMetricsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/kubelet/metrics/collectors"
	src := upstreamsrc.New(t)
	up := map[string]metricDef{}
	for _, f := range src.Files(pkg) {
		// resource_metrics.go is the file that declares the constructor.
		if !declaresFunc(f.Node.(*ast.File), "NewResourceMetricsCollector") {
			continue
		}
		ast.Inspect(f.Node, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Values) != 1 {
				return true
			}
			if call, ok := vs.Values[0].(*ast.CallExpr); ok && isSel(call.Fun, "metrics", "NewDesc") {
				up[vs.Names[0].Name] = descFromUpstream(src.Value(pkg, vs.Names[0].Name))
			}
			return false
		})
	}
	if len(up) == 0 {
		t.Fatal("found no metrics.NewDesc in upstream's resource_metrics.go (moved? update the test)")
	}
	if diff := cmp.Diff(up, resourceDefs); diff != "" {
		t.Errorf("resourceDefs differ from upstream's resource_metrics.go (-upstream +berth):\n%s", diff)
	}
}

func declaresFunc(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return true
		}
	}
	return false
}

// descFromUpstream reads metrics.NewDesc(name, help, labels, constLabels,
// stability, deprecatedVersion).
func descFromUpstream(call upstreamsrc.Node) metricDef {
	d := metricDef{Name: call.Arg(0).AsString(), Help: call.Arg(1).AsString(),
		Stability: call.Arg(4).AsString(), Deprecated: call.Arg(5).AsString()}
	if id, ok := call.Arg(2).Node.(*ast.Ident); !ok || id.Name != "nil" {
		d.Labels = call.Arg(2).AsStrings()
	}
	return d
}

func isSel(x ast.Expr, pkg, name string) bool {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}
