package topology

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// upstreamCase is one of upstream's policyMergeTestCase, read from its
// policy_test.go.
type upstreamCase struct {
	name      string
	providers []ProviderHints
	want      Hint
}

// TestMergeUpstreamCases runs upstream's own policy merge cases
// (pkg/kubelet/cm/topologymanager/policy_test.go, read as syntax) through
// Policy.Merge, each policy with the case lists and NUMA nodes upstream's
// TestPolicy*Merge functions give it.
func TestMergeUpstreamCases(t *testing.T) {
	src := upstreamsrc.New(t)
	path := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg", "kubelet", "cm", "topologymanager", "policy_test.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	four, eight := fourNodes(), eightNodes()
	for _, run := range []struct {
		name   string
		policy Policy
		lists  [][2]string // receiver, function
	}{
		{name: "best-effort", policy: Policy{Name: PolicyBestEffort, NUMA: four},
			lists: [][2]string{{"", "commonPolicyMergeTestCases"}, {"bestEffortPolicy", "mergeTestCases"}, {"bestEffortPolicy", "mergeTestCasesNoPolicies"}}},
		{name: "best-effort closest", policy: Policy{Name: PolicyBestEffort, NUMA: eight, Options: Options{PreferClosestNUMA: true}},
			lists: [][2]string{{"", "commonPolicyMergeTestCases"}, {"bestEffortPolicy", "mergeTestCases"}, {"bestEffortPolicy", "mergeTestCasesClosestNUMA"}}},
		{name: "restricted", policy: Policy{Name: PolicyRestricted, NUMA: four},
			lists: [][2]string{{"", "commonPolicyMergeTestCases"}, {"bestEffortPolicy", "mergeTestCases"}, {"bestEffortPolicy", "mergeTestCasesNoPolicies"}}},
		{name: "restricted closest", policy: Policy{Name: PolicyRestricted, NUMA: eight, Options: Options{PreferClosestNUMA: true}},
			lists: [][2]string{{"", "commonPolicyMergeTestCases"}, {"bestEffortPolicy", "mergeTestCases"}, {"bestEffortPolicy", "mergeTestCasesClosestNUMA"}}},
		{name: "single-numa-node", policy: Policy{Name: PolicySingleNUMANode, NUMA: four},
			lists: [][2]string{{"", "commonPolicyMergeTestCases"}, {"singleNumaNodePolicy", "mergeTestCases"}}},
	} {
		n := 0
		for _, l := range run.lists {
			for _, tc := range upstreamCases(t, f, l[0], l[1], run.policy.NUMA.Nodes) {
				n++
				t.Run(run.name+"/"+l[1]+"/"+tc.name, func(t *testing.T) {
					got, _ := run.policy.Merge(tc.providers)
					if got != tc.want {
						t.Errorf("Merge = %v, upstream expects %v", got, tc.want)
					}
				})
			}
		}
		if n < 10 {
			t.Errorf("%s: only %d upstream cases read; did upstream's tests change shape?", run.name, n)
		}
	}
}

// upstreamCases evaluates the []policyMergeTestCase literal that function
// fn (a method of recv, if given) returns.
func upstreamCases(t *testing.T, f *ast.File, recv, fn string, numaNodes []int) []upstreamCase {
	t.Helper()
	var lit *ast.CompositeLit
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || receiverName(fd) != recv {
			continue
		}
		for _, st := range fd.Body.List {
			if ret, ok := st.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
				lit, _ = ret.Results[0].(*ast.CompositeLit)
			}
		}
	}
	if lit == nil {
		t.Fatalf("upstream policy_test.go has no %s.%s returning a case list (update the test)", recv, fn)
	}
	e := evaluator{t: t, numaNodes: numaNodes}
	var out []upstreamCase
	for _, elt := range lit.Elts {
		var tc upstreamCase
		for key, v := range fields(t, elt) {
			switch key {
			case "name":
				tc.name = e.str(v)
			case "hp":
				tc.providers = e.providers(v)
			case "expected":
				tc.want = e.hint(v)
			}
		}
		out = append(out, tc)
	}
	return out
}

func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	x := fd.Recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// fields returns a keyed composite literal's fields.
func fields(t *testing.T, x ast.Expr) map[string]ast.Expr {
	t.Helper()
	cl, ok := x.(*ast.CompositeLit)
	if !ok {
		t.Fatalf("upstream case: %T is not a composite literal", x)
	}
	out := map[string]ast.Expr{}
	for _, elt := range cl.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			t.Fatalf("upstream case: unkeyed field %T", elt)
		}
		out[kv.Key.(*ast.Ident).Name] = kv.Value
	}
	return out
}

type evaluator struct {
	t         *testing.T
	numaNodes []int
}

func (e evaluator) str(x ast.Expr) string {
	s, err := strconv.Unquote(x.(*ast.BasicLit).Value)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// providers evaluates []HintProvider{&mockHintProvider{map...}, ...}.
func (e evaluator) providers(x ast.Expr) []ProviderHints {
	var out []ProviderHints
	for _, elt := range x.(*ast.CompositeLit).Elts {
		if u, ok := elt.(*ast.UnaryExpr); ok {
			elt = u.X
		}
		mock := elt.(*ast.CompositeLit)
		if len(mock.Elts) == 0 || isNil(mock.Elts[0]) {
			out = append(out, nil)
			continue
		}
		m := ProviderHints{}
		for _, kv := range mock.Elts[0].(*ast.CompositeLit).Elts {
			kv := kv.(*ast.KeyValueExpr)
			m[e.str(kv.Key)] = e.hints(kv.Value)
		}
		out = append(out, m)
	}
	return out
}

// hints evaluates a resource's hint list: nil, {} or {{...}, ...}.
func (e evaluator) hints(x ast.Expr) []Hint {
	if isNil(x) {
		return nil
	}
	out := []Hint{}
	for _, elt := range x.(*ast.CompositeLit).Elts {
		out = append(out, e.hint(elt))
	}
	return out
}

// hint evaluates {NUMANodeAffinity: NewTestBitMask(...)|nil, Preferred: b}.
func (e evaluator) hint(x ast.Expr) Hint {
	var h Hint
	for key, v := range fields(e.t, x) {
		switch key {
		case "Preferred":
			h.Preferred = v.(*ast.Ident).Name == "true"
		case "NUMANodeAffinity":
			h.Affinity = e.mask(v)
		default:
			e.t.Fatalf("upstream hint: unknown field %s", key)
		}
	}
	return h
}

func (e evaluator) mask(x ast.Expr) Mask {
	if isNil(x) {
		return 0
	}
	call := x.(*ast.CallExpr)
	if call.Fun.(*ast.Ident).Name != "NewTestBitMask" {
		e.t.Fatalf("upstream hint: affinity from %v", call.Fun)
	}
	if call.Ellipsis.IsValid() {
		return MustMask(e.numaNodes...)
	}
	var nodes []int
	for _, a := range call.Args {
		n, err := strconv.Atoi(a.(*ast.BasicLit).Value)
		if err != nil {
			e.t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	return MustMask(nodes...)
}

func isNil(x ast.Expr) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == "nil"
}
