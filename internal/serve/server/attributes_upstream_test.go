package server

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// upstreamServer is the package of upstream's GetRequestAttributes.
const upstreamServer = "k8s.io/kubernetes/pkg/kubelet/server"

// upstreamAuth is upstream's mapping of a kubelet API request to the node
// subresources it is authorized against, read from the source of
// GetRequestAttributes (auth.go): building that package would compile
// some 1,400 packages.
type upstreamAuth struct {
	// Verbs maps an HTTP method to its API verb; other methods get "".
	Verbs map[string]string
	// Gated are checked first when the feature gate around them is on by
	// default; the first match adds its subresource.
	Gated  []pathRule
	GateOn bool
	// Rules are checked next; the first match adds its subresource, and
	// Fallback is added when none matches.
	Rules    []pathRule
	Fallback string
}

type pathRule struct{ Prefix, Subresource string }

// attributes returns the verb and the subresources upstream authorizes a
// request with, by its isSubpath (whose source loadUpstreamAuth pins to
// berth's isSubpath).
func (u *upstreamAuth) attributes(method, path string) (string, []string) {
	var subs []string
	if u.GateOn {
		if r, ok := firstMatch(u.Gated, path); ok {
			subs = append(subs, r.Subresource)
		}
	}
	if r, ok := firstMatch(u.Rules, path); ok {
		subs = append(subs, r.Subresource)
	} else {
		subs = append(subs, u.Fallback)
	}
	return u.Verbs[method], subs
}

func firstMatch(rules []pathRule, path string) (pathRule, bool) {
	for _, r := range rules {
		if isSubpath(path, r.Prefix) {
			return r, true
		}
	}
	return pathRule{}, false
}

// TestRequestAttributesUpstreamTable pins what loadUpstreamAuth reads, so
// a change of upstream's table shows here by name.
func TestRequestAttributesUpstreamTable(t *testing.T) {
	got := loadUpstreamAuth(t, upstreamsrc.New(t))
	want := &upstreamAuth{
		Verbs: map[string]string{"POST": "create", "GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"},
		Gated: []pathRule{
			{allocatedPodsPath, "pods"}, {podsPath, "pods"}, {healthzPath, "healthz"}, {configzPath, "configz"}, {runningPodsPath, "pods"},
		},
		GateOn: true,
		Rules: []pathRule{
			{statsPath, "stats"}, {metricsPath, "metrics"}, {logsPath, "log"}, {checkpointPath + "/", "checkpoint"},
			{statuszPath, "statusz"}, {flagzPath, "configz"},
		},
		Fallback: "proxy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("upstream's GetRequestAttributes table (-berth +upstream):\n%s", diff)
	}
}

// FuzzRequestAttributesUpstream: RequestAttributes asks the authorizer the
// same questions, in the same order, as upstream's GetRequestAttributes,
// for any method and path.
func FuzzRequestAttributesUpstream(f *testing.F) {
	up := loadUpstreamAuth(f, upstreamsrc.New(f))
	u := &User{Name: "alice", Groups: []string{AuthenticatedGroup}}
	f.Fuzz(func(t *testing.T, method, path string) {
		verb, subs := up.attributes(method, path)
		var want []Attributes
		for _, sub := range subs {
			want = append(want, Attributes{User: u, Verb: verb, Resource: "nodes", Subresource: sub, Name: "node-1", Path: path})
		}
		if diff := cmp.Diff(want, RequestAttributes(u, method, path, "node-1")); diff != "" {
			t.Fatalf("%s %q (-upstream +berth):\n%s", method, path, diff)
		}
	})
}

// loadUpstreamAuth reads upstream's GetRequestAttributes and fails when
// its shape is not the one upstreamAuth models: requestPath := r.URL.Path,
// a switch on r.Method assigning apiVerb, an if on a feature gate around a
// switch of isSubpath cases, then a switch of isSubpath cases with a
// default, each case appending one subresource. It also pins upstream's
// isSubpath to berth's.
func loadUpstreamAuth(t testing.TB, src *upstreamsrc.Source) *upstreamAuth {
	t.Helper()
	r := &authReader{t: t, src: src, fset: token.NewFileSet(), imports: upstreamImports(t, src, "GetRequestAttributes")}
	if got, want := r.source(src.Func(upstreamServer, "isSubpath").Node.(*ast.FuncDecl).Body), r.source(parseBody(t, isSubpathBody)); got != want {
		t.Fatalf("upstream's isSubpath is now\n%s\nberth's isSubpath (attributes.go) must follow it", got)
	}
	u := &upstreamAuth{Verbs: map[string]string{}}
	switches := 0
	for _, stmt := range src.Func(upstreamServer, "GetRequestAttributes").Node.(*ast.FuncDecl).Body.List {
		switch s := stmt.(type) {
		case *ast.AssignStmt:
			if r.source(s.Lhs[0]) == "requestPath" && r.source(s.Rhs[0]) != "r.URL.Path" {
				t.Fatalf("upstream's requestPath is %s, not r.URL.Path", r.source(s.Rhs[0]))
			}
		case *ast.SwitchStmt:
			if s.Tag != nil {
				r.verbs(s, u.Verbs)
				continue
			}
			switches++
			u.Rules, u.Fallback = r.pathSwitch(s)
		case *ast.IfStmt:
			u.GateOn = r.gateDefault(r.featureGate(s.Cond))
			sw, ok := s.Body.List[0].(*ast.SwitchStmt)
			if len(s.Body.List) != 1 || !ok || sw.Tag != nil {
				t.Fatalf("upstream's feature gate block changed:\n%s", r.source(s))
			}
			var fallback string
			if u.Gated, fallback = r.pathSwitch(sw); fallback != "" {
				t.Fatalf("upstream's gated switch has a default case")
			}
		}
	}
	if len(u.Verbs) == 0 || switches != 1 || u.Fallback == "" {
		t.Fatalf("upstream's GetRequestAttributes changed shape: verbs %v, %d path switches, fallback %q", u.Verbs, switches, u.Fallback)
	}
	return u
}

// isSubpathBody is upstream's isSubpath, which berth's isSubpath follows
// (there with the parameters named p and prefix).
const isSubpathBody = `{
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && subpath[len(path)] == '/')
}`

// parseBody parses a function body. Printed by authReader.source, it
// compares with an upstream body whatever the line layout.
func parseBody(t testing.TB, body string) *ast.BlockStmt {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc f(subpath, path string) bool "+body, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return f.Decls[0].(*ast.FuncDecl).Body
}

// upstreamImports maps the names the file declaring fn imports to their
// import paths.
func upstreamImports(t testing.TB, src *upstreamsrc.Source, fn string) map[string]string {
	t.Helper()
	for _, f := range src.Files(upstreamServer) {
		file := f.Node.(*ast.File)
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
				out := map[string]string{}
				for _, imp := range file.Imports {
					p, _ := strconv.Unquote(imp.Path.Value)
					name := path.Base(p)
					if imp.Name != nil {
						name = imp.Name.Name
					}
					out[name] = p
				}
				return out
			}
		}
	}
	t.Fatalf("upstream %s has no file declaring %s", upstreamServer, fn)
	return nil
}

// authReader reads pieces of GetRequestAttributes.
type authReader struct {
	t       testing.TB
	src     *upstreamsrc.Source
	fset    *token.FileSet
	imports map[string]string
}

// source prints a piece of syntax. Its positions belong to another file
// set, so the layout is the printer's own: compare only what source printed.
func (r *authReader) source(n ast.Node) string {
	r.t.Helper()
	var b bytes.Buffer
	if err := printer.Fprint(&b, r.fset, n); err != nil {
		r.t.Fatal(err)
	}
	return b.String()
}

func (r *authReader) verbs(s *ast.SwitchStmt, verbs map[string]string) {
	r.t.Helper()
	if r.source(s.Tag) != "r.Method" {
		r.t.Fatalf("upstream switches on %s, not r.Method", r.source(s.Tag))
	}
	for _, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		a, ok := cc.Body[0].(*ast.AssignStmt)
		if len(cc.Body) != 1 || !ok || r.source(a.Lhs[0]) != "apiVerb" {
			r.t.Fatalf("upstream's method case changed:\n%s", r.source(cc))
		}
		for _, e := range cc.List {
			verbs[r.str(e)] = r.str(a.Rhs[0])
		}
	}
}

// pathSwitch reads `case isSubpath(requestPath, P): subresources =
// append(subresources, "s")` cases and the default's subresource.
func (r *authReader) pathSwitch(s *ast.SwitchStmt) (rules []pathRule, fallback string) {
	r.t.Helper()
	for _, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		a, ok := cc.Body[0].(*ast.AssignStmt)
		if len(cc.Body) != 1 || !ok || !strings.HasPrefix(r.source(a.Rhs[0]), "append(subresources, ") {
			r.t.Fatalf("upstream's path case changed:\n%s", r.source(cc))
		}
		sub := r.str(a.Rhs[0].(*ast.CallExpr).Args[1])
		if cc.List == nil {
			fallback = sub
			continue
		}
		call, ok := cc.List[0].(*ast.CallExpr)
		if len(cc.List) != 1 || !ok || r.source(call.Fun) != "isSubpath" || r.source(call.Args[0]) != "requestPath" {
			r.t.Fatalf("upstream's path case changed:\n%s", r.source(cc))
		}
		rules = append(rules, pathRule{Prefix: r.str(call.Args[1]), Subresource: sub})
	}
	return rules, fallback
}

// str evaluates a string literal or a constant of upstream's server
// package or of a package auth.go imports.
func (r *authReader) str(e ast.Expr) string {
	r.t.Helper()
	switch x := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING {
			return s
		}
	case *ast.Ident:
		return r.src.Value(upstreamServer, x.Name).AsString()
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && r.imports[id.Name] != "" {
			return r.src.Value(r.imports[id.Name], x.Sel.Name).AsString()
		}
	}
	r.t.Fatalf("upstream's %s is not a string this test evaluates", r.source(e))
	return ""
}

// featureGate returns X of utilfeature.DefaultFeatureGate.Enabled(features.X).
func (r *authReader) featureGate(cond ast.Expr) string {
	r.t.Helper()
	if call, ok := cond.(*ast.CallExpr); ok && len(call.Args) == 1 && r.source(call.Fun) == "utilfeature.DefaultFeatureGate.Enabled" {
		if sel, ok := call.Args[0].(*ast.SelectorExpr); ok && r.source(sel.X) == "features" {
			return sel.Sel.Name
		}
	}
	r.t.Fatalf("upstream's condition changed: %s", r.source(cond))
	return ""
}

// gateDefault returns the default of a feature gate in the release
// tools/kube pins, from its versioned specs in pkg/features.
func (r *authReader) gateDefault(gate string) bool {
	r.t.Helper()
	release := r.src.Version("k8s.io/kubernetes") // v1.37.2
	minor, err := strconv.Atoi(strings.Split(release, ".")[1])
	if err != nil {
		r.t.Fatalf("upstream version %q: %v", release, err)
	}
	var specs []upstreamsrc.Node
	for _, e := range r.src.Value(r.imports["features"], "defaultVersionedKubernetesFeatureGates").Elems() {
		// Keys are features.X or genericfeatures.X: match the name only.
		if kv, ok := e.Node.(*ast.KeyValueExpr); ok && r.source(kv.Key) == gate {
			specs = e.CompositeLits()[0].Elems()
		}
	}
	if specs == nil {
		r.t.Fatalf("upstream has no versioned specs for feature %s", gate)
	}
	best, def := -1, false
	for _, spec := range specs {
		f := spec.Fields()
		v, err := strconv.Atoi(strings.TrimPrefix(f["Version"].Arg(0).AsString(), "1."))
		if err != nil {
			r.t.Fatalf("feature %s: version %s", gate, r.source(f["Version"].Node))
		}
		if v <= minor && v > best {
			best, def = v, r.source(f["Default"].Node) == "true"
		}
	}
	if best < 0 {
		r.t.Fatalf("feature %s has no spec for %s", gate, release)
	}
	return def
}
