package podsync

import (
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestSpanNamesMatchUpstream pins the names of the sync spans to the
// names upstream's Kubelet methods give theirs (kl.tracer.Start(ctx,
// "<name>", ...)).
func TestSpanNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for method, want := range map[string]string{
		"SyncPod":            spanSyncPod,
		"SyncTerminatingPod": spanSyncTerminatingPod,
		"SyncTerminatedPod":  spanSyncTerminatedPod,
	} {
		var names []string
		ast.Inspect(src.Func("k8s.io/kubernetes/pkg/kubelet", method).Node, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Start" {
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					names = append(names, s)
				}
			}
			return true
		})
		if len(names) != 1 || names[0] != want {
			t.Errorf("upstream Kubelet.%s starts spans %q, berth %q", method, names, want)
		}
	}
}

// TestPrepareEventMatchesUpstream pins the reason and message of the event
// a pod whose claims cannot be prepared gets to upstream's SyncPod.
func TestPrepareEventMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/events", "FailedPrepareDynamicResources").AsString(); up != eventFailedPrepareDynamicResources {
		t.Errorf("reason %q, upstream %q", eventFailedPrepareDynamicResources, up)
	}
	lits := src.Func("k8s.io/kubernetes/pkg/kubelet/kuberuntime", "SyncPod").StringLiterals()
	if !slices.Contains(lits, "Failed to prepare dynamic resources: %v") {
		t.Errorf("upstream's SyncPod has no event message %q", "Failed to prepare dynamic resources: %v")
	}
}
