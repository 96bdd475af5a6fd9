package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestRemovedCadvisorFlagsMatchUpstream pins removedCadvisorFlags to
// cadvisorflags.Deprecated() of the cAdvisor the pinned kubelet builds
// with: the flags its v1.37 flag set no longer registers.
func TestRemovedCadvisorFlagsMatchUpstream(t *testing.T) {
	dir := filepath.Join(upstreamsrc.New(t).ModuleDir("github.com/google/cadvisor/lib"), "cadvisorflags")
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "flags.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var deprecated []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ValueSpec:
			if len(x.Values) == 1 {
				if lit, ok := x.Values[0].(*ast.BasicLit); ok {
					v, _ := strconv.Unquote(lit.Value)
					consts[x.Names[0].Name] = v
				}
			}
		case *ast.FuncDecl:
			if x.Name.Name != "Deprecated" {
				return false
			}
			ast.Inspect(x.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name != "string" {
					deprecated = append(deprecated, id.Name)
				}
				return true
			})
			return false
		}
		return true
	})
	var want []string
	for _, name := range deprecated {
		want = append(want, strings.ReplaceAll(consts[name], "_", "-"))
	}
	if len(want) == 0 {
		t.Fatalf("found no flags in %s's Deprecated", dir)
	}
	if diff := cmp.Diff(want, removedCadvisorFlags()); diff != "" {
		t.Errorf("removedCadvisorFlags differ from cadvisorflags.Deprecated (-upstream +berth):\n%s", diff)
	}
}

// TestCheckArgsRemovedCadvisorFlag: k0s still passes --containerd; berth,
// like the v1.37.2 kubelet, refuses it, and says why.
func TestCheckArgsRemovedCadvisorFlag(t *testing.T) {
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	NewFlags().AddFlags(fs)
	err := CheckArgs(fs, []string{"--containerd=/run/k0s/containerd.sock", "--v=1"})
	want := "unknown flags (1): --containerd (removed upstream in v1.37 with cAdvisor's deprecated flags (only --housekeeping-interval is kept))"
	if err == nil || err.Error() != want {
		t.Errorf("CheckArgs = %v, want %q", err, want)
	}
}
