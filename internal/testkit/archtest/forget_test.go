package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// STYLE rule 20: one route by which per-pod state ends. TestPerPodStateEnds
// holds it for the state it can see, by this rule:
//
//	Every struct field and package-level variable, in the non-test files
//	under internal/, whose type holds a map keyed by types.UID
//	(k8s.io/apimachinery/pkg/types; at any depth: map[types.UID]T,
//	map[string]map[types.UID]T, atomic.Pointer[map[types.UID]T], or a
//	type of the same package declared as one), or a sync.Map (whose keys
//	it cannot see), is per-pod state. Its package must declare a method
//	Forget(context.Context, types.UID): the owner's end, which the wiring
//	registers with the route (internal/app/agent/forget.go,
//	internal/pod/podgone). The only other way out is an entry of
//	notPerPodState below, which says why the map is not per-pod state
//	that outlives a pod; an entry that matches nothing fails the test.
//
// Out of its sight: maps keyed by a string UID (the CPU and memory
// managers' checkpoints keep upstream's format), slices of per-pod records
// and maps local to a function. Their owners register by hand.
func TestPerPodStateEnds(t *testing.T) {
	root := filepath.Join("..", "..")
	sites, forgetters := scanPerPodState(t, root)
	used := map[string]bool{}
	for _, s := range sites {
		if why, ok := notPerPodState[s.name]; ok {
			used[s.name] = true
			if why == "" {
				t.Errorf("%s: allow-list entry %s gives no reason", s.pos, s.name)
			}
			continue
		}
		if !forgetters[s.pkg] {
			t.Errorf("%s: %s holds per-pod state (%s) but package %s has no Forget(context.Context, types.UID): "+
				"give its owner one and register it with the route (internal/app/agent/forget.go), "+
				"or say in notPerPodState why it is not per-pod state that outlives a pod", s.pos, s.name, s.typ, s.pkg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(notPerPodState)) {
		if !used[name] {
			t.Errorf("notPerPodState lists %s, which holds no map keyed by types.UID any more: remove the entry", name)
		}
	}
	if len(sites) < 20 {
		t.Errorf("found only %d per-pod maps: the scan is broken", len(sites))
	}
}

// notPerPodState lists the maps keyed by pod UID that are not per-pod
// state that outlives a pod, by package path (under internal/) and
// Type.field or var name, each with why.
var notPerPodState = map[string]string{
	// The pod workers are the route's source: a worker ends when it is
	// Finished and its pod is gone, which is when they send Gone.
	"pod/podworker.Workers.workers":            "the pod workers themselves: a worker is forgotten as it announces its pod gone",
	"pod/podworker.retryQueue.due":             "a worker's requeue time, removed with the worker",
	"pod/syncloop.Loop.pods":                   "the desired set itself: a pod leaves it when its source removes it",
	"pod/syncloop.desiredSnapshot.byUID":       "the published copy of the desired set, replaced whole on every change",
	"pod/podsource.apiStore.pods":              "the API's pods on this node as the watch last gave them: the source of what is desired, not state about a pod",
	"pod/podsource.diffResult.next":            "the result of one snapshot's diff",
	"sim/podfeed.Feed.pods":                    "berth simulate's shared watch: the API's bound pods as it last gave them, an entry removed when the API deletes the pod",
	"pod/pleg.Cache.pods":                      "the runtime's pods as last listed: an entry ends when the runtime no longer has the pod, not when the pod is gone",
	"pod/pleg.Cache.waiters":                   "blocked GetNewerThan calls, each answered once",
	"pod/pleg.PLEG.records":                    "the last listing, the base of the next relist's diff: ends with the runtime pod",
	"pod/pleg.PLEG.reinspect":                  "rebuilt whole by every relist",
	"pod/housekeeping.Housekeeper.suspects":    "the orphans of the last round, rebuilt whole every round",
	"node/eviction.ChooseInput.Stats":          "the eviction chooser's input, built for one pass",
	"node/eviction.Snapshot.Stats":             "the last eviction pass's input, replaced whole by the next pass",
	"node/gc.ContainerInputs.Pods":             "the container GC's input, built for one pass",
	"node/gc.ContainerInputs.ContentRemovable": "the container GC's input, built for one pass",
}

// site is one struct field or package-level variable holding a map keyed
// by types.UID.
type site struct {
	pkg  string // package path under internal/
	name string // pkg.Type.field or pkg.var
	typ  string
	pos  token.Position
}

// scanPerPodState parses every non-test file under root and returns the
// per-pod maps and the packages that declare Forget(context.Context,
// types.UID).
func scanPerPodState(t *testing.T, root string) ([]site, map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	byPkg := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		byPkg[filepath.ToSlash(rel)] = append(byPkg[filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sites []site
	forgetters := map[string]bool{}
	for pkg, files := range byPkg {
		p := &pkgScan{pkg: pkg, fset: fset, uidTypes: map[string]bool{}}
		p.findUIDTypes(files)
		for _, f := range files {
			imp := imports(f)
			sites = append(sites, p.sites(f, imp)...)
			if declaresForget(f, imp) {
				forgetters[pkg] = true
			}
		}
	}
	return sites, forgetters
}

const (
	typesPath   = "k8s.io/apimachinery/pkg/types"
	contextPath = "context"
	syncPath    = "sync"
)

// imports maps an import path to the name the file uses for it.
func imports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, s := range f.Imports {
		path, _ := strconv.Unquote(s.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if s.Name != nil {
			name = s.Name.Name
		}
		out[path] = name
	}
	return out
}

// pkgScan scans one package. uidTypes are its type names declared as (or
// as holding) a map keyed by types.UID.
type pkgScan struct {
	pkg      string
	fset     *token.FileSet
	uidTypes map[string]bool
}

// findUIDTypes records the package's non-struct type declarations that
// hold a map keyed by types.UID (type podSet map[types.UID]*corev1.Pod).
func (p *pkgScan) findUIDTypes(files []*ast.File) {
	for _, f := range files {
		imp := imports(f)
		for _, ts := range typeSpecs(f) {
			if _, isStruct := ts.Type.(*ast.StructType); !isStruct && p.holdsUIDMap(ts.Type, imp) {
				p.uidTypes[ts.Name.Name] = true
			}
		}
	}
}

func typeSpecs(f *ast.File) []*ast.TypeSpec {
	var out []*ast.TypeSpec
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				out = append(out, s.(*ast.TypeSpec))
			}
		}
	}
	return out
}

// sites returns the file's struct fields and package-level variables
// that hold a map keyed by types.UID or a sync.Map.
func (p *pkgScan) sites(f *ast.File, imp map[string]string) []site {
	var out []site
	add := func(name string, typ ast.Expr, pos token.Pos) {
		out = append(out, site{pkg: p.pkg, name: p.pkg + "." + name, typ: exprString(typ), pos: p.fset.Position(pos)})
	}
	for _, ts := range typeSpecs(f) {
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue // a type holds nothing; its fields and variables do
		}
		for _, field := range st.Fields.List {
			if !p.holdsUIDMap(field.Type, imp) && !isSyncMap(field.Type, imp) {
				continue
			}
			for _, n := range field.Names {
				add(ts.Name.Name+"."+n.Name, field.Type, n.Pos())
			}
		}
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				typ := vs.Type
				if typ == nil && i < len(vs.Values) {
					if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
						typ = cl.Type
					}
				}
				if typ != nil && (p.holdsUIDMap(typ, imp) || isSyncMap(typ, imp)) {
					add(n.Name, typ, n.Pos())
				}
			}
		}
	}
	return out
}

// holdsUIDMap reports whether the type expression holds, at any depth, a
// map keyed by types.UID or a type of the package that does.
func (p *pkgScan) holdsUIDMap(e ast.Expr, imp map[string]string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.MapType:
			if isSelector(n.Key, imp[typesPath], "UID") {
				found = true
			}
		case *ast.Ident:
			if p.uidTypes[n.Name] {
				found = true
			}
		case *ast.FuncType, *ast.InterfaceType:
			return false // a function's parameters hold nothing
		}
		return !found
	})
	return found
}

func isSyncMap(e ast.Expr, imp map[string]string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok && isSelector(x, imp[syncPath], "Map") {
			found = true
		}
		return !found
	})
	return found
}

func isSelector(e ast.Expr, pkgName, sel string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || pkgName == "" {
		return false
	}
	x, ok := s.X.(*ast.Ident)
	return ok && x.Name == pkgName && s.Sel.Name == sel
}

// declaresForget reports whether the file declares a method
// Forget(context.Context, types.UID) with no results.
func declaresForget(f *ast.File, imp map[string]string) bool {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Name.Name != "Forget" || fn.Type.Results != nil {
			continue
		}
		var params []ast.Expr
		for _, field := range fn.Type.Params.List {
			for range max(len(field.Names), 1) {
				params = append(params, field.Type)
			}
		}
		if len(params) == 2 && isSelector(params[0], imp[contextPath], "Context") && isSelector(params[1], imp[typesPath], "UID") {
			return true
		}
	}
	return false
}

// exprString prints a type expression for messages.
func exprString(e ast.Expr) string {
	var b strings.Builder
	var walk func(ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			b.WriteString(e.Name)
		case *ast.SelectorExpr:
			walk(e.X)
			b.WriteString("." + e.Sel.Name)
		case *ast.StarExpr:
			b.WriteString("*")
			walk(e.X)
		case *ast.MapType:
			b.WriteString("map[")
			walk(e.Key)
			b.WriteString("]")
			walk(e.Value)
		case *ast.ArrayType:
			b.WriteString("[]")
			walk(e.Elt)
		case *ast.IndexExpr:
			walk(e.X)
			b.WriteString("[")
			walk(e.Index)
			b.WriteString("]")
		case *ast.StructType:
			b.WriteString("struct{...}")
		default:
			b.WriteString("...")
		}
	}
	walk(e)
	return b.String()
}
