package config

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestKubernetesVersionIsPinned holds berth to one upstream: the release
// it claims to stand in for is the k8s.io/kubernetes that tools/kube pins
// (whose source the other pinned-table tests read), and the staging
// modules berth builds against are that release's.
func TestKubernetesVersionIsPinned(t *testing.T) {
	src := upstreamsrc.New(t)
	if v := src.Version("k8s.io/kubernetes"); v != KubernetesVersion {
		t.Errorf("KubernetesVersion is %s, tools/kube pins k8s.io/kubernetes %s", KubernetesVersion, v)
	}
	for _, mod := range []string{
		"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/component-base",
		"k8s.io/component-helpers", "k8s.io/cri-api", "k8s.io/kubelet",
	} {
		if own, up := src.BerthVersion(mod), src.Version(mod); own != up {
			t.Errorf("berth builds against %s %s, upstream %s requires %s", mod, own, KubernetesVersion, up)
		}
	}
}

// TestDefaultsMatchUpstream pins the upstream defaults berth copies that
// upstream keeps as data: the hard eviction thresholds and the root and
// certificate directories of the kubelet's flags.
func TestDefaultsMatchUpstream(t *testing.T) {
	const options = "k8s.io/kubernetes/cmd/kubelet/app/options"
	src := upstreamsrc.New(t)
	up := src.Value("k8s.io/kubernetes/pkg/kubelet/eviction", "DefaultEvictionHard").AsStringMap()
	if diff := cmp.Diff(up, defaultEvictionHard()); diff != "" {
		t.Errorf("evictionHard defaults differ from upstream's DefaultEvictionHard (-upstream +berth):\n%s", diff)
	}
	flags := src.Func(options, "NewKubeletFlags").CompositeLits()[0].Fields()
	for _, tt := range []struct{ field, berth string }{
		{"RootDirectory", DefaultRootDir},
		{"CertDirectory", DefaultCertDir},
	} {
		if up := flags[tt.field].AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream NewKubeletFlags %q", tt.field, tt.berth, up)
		}
	}
}

// berthOnlyFlags are flags berth accepts that upstream's kubelet no longer
// registers, each with why berth keeps it. TestFlagsMatchUpstream fails
// when one of them comes back upstream or a new one appears.
var berthOnlyFlags = map[string]string{
	// Removed upstream, where the runtime chooses the sandbox image; berth
	// still uses it to keep that image from image garbage collection.
	"pod-infra-container-image": "removed upstream",
	// Upstream's relist period is a constant; berth's tests lengthen it
	// to show that the container event stream, not the relist, moves a
	// pod's status.
	"pleg-relist-period": "berth's own",
	// Upstream's device plugin directory is a constant; tests running
	// several nodes on one host give each its own.
	"device-plugin-dir": "berth's own",
}

// upstreamFlag is one flag registration in upstream's source.
type upstreamFlag struct {
	// Func is the registering method: StringVar, Int32Var, Var, VarP...
	Func string
	// Value is, for Var and VarP, the value's constructor or type
	// (cliflag.NewMapStringString, utilflag.IPVar, VerbosityLevelPflag).
	Value string
	// Root is the variable the bound field hangs off (c: a configuration,
	// f or o: KubeletFlags), Path the field's Go path from it
	// ("Authentication.Webhook.CacheTTL"), without a trailing ".Duration".
	Root, Path string
	// Logging is true for component-base's logging flags, whose c is the
	// KubeletConfiguration's logging field.
	Logging bool
	Node    upstreamsrc.Node
}

// upstreamFlags returns the flags the upstream kubelet registers, by name:
// every fs.XxxVar(P) call in its options package and in component-base's
// logging options (-v, --vmodule...).
func upstreamFlags(t *testing.T) map[string]upstreamFlag {
	src := upstreamsrc.New(t)
	out := map[string]upstreamFlag{}
	for _, pkg := range []string{"k8s.io/kubernetes/cmd/kubelet/app/options", "k8s.io/component-base/logs/api/v1"} {
		for _, f := range src.Files(pkg) {
			calls := f.CallsTo(func(_, fn string) bool { return strings.HasSuffix(fn, "Var") || strings.HasSuffix(fn, "VarP") })
			for _, c := range calls {
				call := c.Node.(*ast.CallExpr)
				if len(call.Args) < 2 {
					continue
				}
				switch call.Args[1].(type) {
				case *ast.BasicLit, *ast.Ident, *ast.SelectorExpr:
				default:
					continue
				}
				u := upstreamFlag{Func: call.Fun.(*ast.SelectorExpr).Sel.Name, Node: c, Logging: strings.HasPrefix(pkg, "k8s.io/component-base")}
				u.Root, u.Path = boundField(call.Args[0])
				if id, ok := call.Args[0].(*ast.UnaryExpr); ok && u.Root == "" {
					// fs.Var(&bindableNodeLabels, ...): a local copy of
					// f.NodeLabels, made the statement before.
					if x, ok := id.X.(*ast.Ident); ok && x.Name == "bindableNodeLabels" {
						u.Root, u.Path = "f", "NodeLabels"
					}
				}
				if u.Func == "Var" || u.Func == "VarP" {
					u.Value = valueName(call.Args[0])
				}
				out[c.Arg(1).AsString()] = u
			}
		}
	}
	// AddGlobalFlags re-registers cAdvisor's Go flags:
	// register(global, local, cadvisorflags.HousekeepingInterval).
	for _, f := range src.Files("k8s.io/kubernetes/cmd/kubelet/app/options") {
		ast.Inspect(f.Node, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "register" || len(call.Args) != 3 {
				return true
			}
			sel, ok := call.Args[2].(*ast.SelectorExpr)
			if !ok || sel.X.(*ast.Ident).Name != "cadvisorflags" {
				t.Fatalf("upstream registers a global flag with %T, update the test", call.Args[2])
			}
			// The constants are cAdvisor's flag names (which tools/kube does
			// not download): known ones only, so a new one fails here.
			name, known := map[string]string{"HousekeepingInterval": "housekeeping-interval"}[sel.Sel.Name]
			if !known {
				t.Fatalf("upstream registers cAdvisor's %s too: add it to berth and to this test", sel.Sel.Name)
			}
			out[name] = upstreamFlag{Func: "DurationVar", Root: "cadvisor", Path: sel.Sel.Name}
			return true
		})
	}
	if _, ok := out["root-dir"]; !ok {
		t.Fatalf("found %d upstream flags without root-dir: upstream registers its flags differently, update the test", len(out))
	}
	if _, ok := out["v"]; !ok {
		t.Fatalf("found %d upstream flags without v: upstream registers its flags differently, update the test", len(out))
	}
	return out
}

// boundField finds the first &x.A.B in e and returns x and "A.B", with a
// trailing .Duration (metav1.Duration's) dropped.
func boundField(e ast.Expr) (root, path string) {
	ast.Inspect(e, func(n ast.Node) bool {
		u, ok := n.(*ast.UnaryExpr)
		if !ok || u.Op != token.AND || root != "" {
			return root == ""
		}
		if _, ok := u.X.(*ast.SelectorExpr); !ok {
			return true // &utilflag.IPVar{Val: &c.Address}: look inside
		}
		var parts []string
		x := u.X
		for {
			sel, ok := x.(*ast.SelectorExpr)
			if !ok {
				break
			}
			parts = append([]string{sel.Sel.Name}, parts...)
			x = sel.X
		}
		if id, ok := x.(*ast.Ident); ok && len(parts) > 0 {
			root = id.Name
			for len(parts) > 1 && parts[len(parts)-1] == "Duration" {
				parts = parts[:len(parts)-1]
			}
			path = strings.Join(parts, ".")
		}
		return false
	})
	return root, path
}

// valueName names the pflag.Value a Var call registers: the called
// constructor or the composite literal's type, without its package.
func valueName(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	var x ast.Expr
	switch v := e.(type) {
	case *ast.CallExpr:
		x = v.Fun
	case *ast.CompositeLit:
		x = v.Type
	case *ast.Ident:
		return "ident:" + v.Name
	case *ast.SelectorExpr:
		return "field"
	}
	switch v := x.(type) {
	case *ast.SelectorExpr:
		return v.Sel.Name
	case *ast.Ident:
		return v.Name
	}
	return ""
}

// TestFlagsMatchUpstream checks that every flag berth accepts is one the
// upstream kubelet registers, but for berthOnlyFlags.
func TestFlagsMatchUpstream(t *testing.T) {
	upstream := upstreamFlags(t)
	for _, f := range flagSupport() {
		name := strings.TrimPrefix(f.Name, "--")
		why, berthOnly := berthOnlyFlags[name]
		switch {
		case berthOnly && upstream[name].Func != "":
			t.Errorf("--%s is upstream's again: drop it from berthOnlyFlags (%s)", name, why)
		case !berthOnly && upstream[name].Func == "":
			t.Errorf("--%s is not an upstream kubelet flag", name)
		}
	}
}
