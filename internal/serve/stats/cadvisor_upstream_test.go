package stats

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestCadvisorMetricsMatchCadvisor pins the names, help texts and extra
// labels of the /metrics/cadvisor metrics to cAdvisor's metrics package
// (the module k8s.io/kubernetes depends on), and the machine labels.
func TestCadvisorMetricsMatchCadvisor(t *testing.T) {
	dir := filepath.Join(upstreamsrc.New(t).ModuleDir("github.com/google/cadvisor/lib"), "metrics")
	up := map[string]metricDef{}
	var machineBase []string
	for _, name := range []string{"prometheus.go", "prometheus_machine.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit: // {name: "...", help: "...", extraLabels: []string{...}}
				if d, ok := metricLit(x); ok {
					up[d.Name] = metricDef{Help: d.Help, Labels: d.Labels}
				}
			case *ast.CallExpr: // prometheus.NewDesc("container_start_time_seconds", "...", ...)
				if isSel(x.Fun, "prometheus", "NewDesc") && len(x.Args) >= 2 {
					name, help := strLit(x.Args[0]), strLit(x.Args[1])
					if name != "" {
						up[name] = metricDef{Help: help}
					}
				}
			case *ast.ValueSpec:
				if len(x.Names) == 1 && x.Names[0].Name == "baseLabelsNames" {
					machineBase = stringsLit(x.Values[0])
				}
			}
			return true
		})
	}
	got := map[string]metricDef{}
	for name := range cadvisorDefs {
		got[name] = up[name]
	}
	if diff := cmp.Diff(got, cadvisorDefs); diff != "" {
		t.Errorf("cadvisorDefs differ from cAdvisor's (-cadvisor +berth):\n%s", diff)
	}
	if diff := cmp.Diff(machineBase, machineLabels); diff != "" {
		t.Errorf("machine labels differ from cAdvisor's baseLabelsNames (-cadvisor +berth):\n%s", diff)
	}
	if diff := cmp.Diff(cadvisorIgnoredPrefixes(t), ignoredDevicePrefixes); diff != "" {
		t.Errorf("ignored network devices differ from cAdvisor's (-cadvisor +berth):\n%s", diff)
	}
}

// cadvisorIgnoredPrefixes reads cAdvisor's ignoredDevicePrefixes.
func cadvisorIgnoredPrefixes(t *testing.T) []string {
	path := filepath.Join(upstreamsrc.New(t).ModuleDir("github.com/google/cadvisor/lib"), "container", "libcontainer", "handler.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "ignoredDevicePrefixes" {
			out = stringsLit(vs.Values[0])
		}
		return true
	})
	return out
}

// metricLit reads a cAdvisor containerMetric or machineMetric literal.
func metricLit(cl *ast.CompositeLit) (metricDef, bool) {
	var d metricDef
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return d, false
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			return d, false
		}
		switch key.Name {
		case "name":
			d.Name = strLit(kv.Value)
		case "help":
			d.Help = strLit(kv.Value)
		case "extraLabels":
			d.Labels = stringsLit(kv.Value)
		}
	}
	return d, d.Name != ""
}

func strLit(x ast.Expr) string {
	if bl, ok := x.(*ast.BasicLit); ok && bl.Kind == token.STRING {
		s, _ := strconv.Unquote(bl.Value)
		return s
	}
	return ""
}

func stringsLit(x ast.Expr) []string {
	cl, ok := x.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range cl.Elts {
		out = append(out, strLit(e))
	}
	return out
}
