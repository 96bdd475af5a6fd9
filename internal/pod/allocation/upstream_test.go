package allocation

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upstreamAllocation = "k8s.io/kubernetes/pkg/kubelet/allocation"
	upstreamKubelet    = "k8s.io/kubernetes/pkg/kubelet"
	upstreamMetrics    = "k8s.io/kubernetes/pkg/kubelet/metrics"
)

// TestTriggersMatchUpstream pins the retry_trigger values to upstream's
// TriggerReason* constants, and fails when upstream has a trigger berth
// does not know of.
func TestTriggersMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	berth := map[string]string{
		"TriggerReasonPodResized":    triggerPodResized,
		"TriggerReasonPodUpdated":    triggerPodUpdated,
		"TriggerReasonPodsAdded":     triggerPodsAdded,
		"TriggerReasonPodsRemoved":   triggerPodsRemoved,
		"TriggerReasonPodTerminated": triggerPodTerminated,
		"triggerReasonPeriodic":      triggerPeriodic,
	}
	up := map[string]string{}
	for _, f := range src.Files(upstreamAllocation) {
		ast.Inspect(f.Node, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if strings.HasPrefix(strings.ToLower(id.Name), "triggerreason") && i < len(vs.Values) {
					up[id.Name] = f.Sub(vs.Values[i]).AsString()
				}
			}
			return true
		})
	}
	if diff := cmp.Diff(up, berth); diff != "" {
		t.Errorf("retry triggers differ from upstream's (-upstream +berth):\n%s", diff)
	}
}

// TestResolutionsMatchUpstream pins the deferred resize resolutions to
// upstream's DeferredResizeResolution* constants.
func TestResolutionsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for name, berth := range map[string]string{
		"DeferredResizeResolutionAccepted":   resolutionAccepted,
		"DeferredResizeResolutionReverted":   resolutionReverted,
		"DeferredResizeResolutionTerminated": resolutionTerminated,
	} {
		if up := src.Value(upstreamMetrics, name).AsString(); up != berth {
			t.Errorf("%s: berth %q, upstream %q", name, berth, up)
		}
	}
}

// labelCalls returns the arguments of the calls of metric.WithLabelValues
// in fn, as nodes of fn's file.
func labelCalls(fn upstreamsrc.Node, metric string) [][]upstreamsrc.Node {
	var out [][]upstreamsrc.Node
	ast.Inspect(fn.Node, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "WithLabelValues" {
			return true
		}
		if m, ok := sel.X.(*ast.SelectorExpr); ok && m.Sel.Name == metric {
			var args []upstreamsrc.Node
			for _, a := range call.Args {
				args = append(args, fn.Sub(a))
			}
			out = append(out, args)
		}
		return true
	})
	return out
}

// returns returns the string literals of fn's return statements of n
// results, each as its list of results (other results "").
func returns(fn upstreamsrc.Node, n int) [][]string {
	var out [][]string
	ast.Inspect(fn.Node, func(x ast.Node) bool {
		ret, ok := x.(*ast.ReturnStmt)
		if !ok || len(ret.Results) != n {
			return true
		}
		var lits []string
		for _, r := range ret.Results {
			if bl, ok := r.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				lits = append(lits, fn.Sub(bl).AsString())
			} else {
				lits = append(lits, "")
			}
		}
		out = append(out, lits)
		return true
	})
	return out
}

// TestInfeasibleDetailsMatchUpstream pins the reason_detail of each
// infeasible resize to upstream's podResizesAdmitHandler: the values it
// counts itself, in its order (swap, then the static CPU and memory
// managers), and the one disallowResizeForMemoryBackedVolumes returns
// with berth's message; and the swap message.
func TestInfeasibleDetailsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	var literal []string
	for _, args := range labelCalls(src.Func(upstreamAllocation, "Admit"), "PodInfeasibleResizes") {
		if bl, ok := args[0].Node.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			literal = append(literal, args[0].AsString())
		}
	}
	if diff := cmp.Diff(literal, []string{detailSwap, detailStaticCPUManager, detailStaticMemoryManager}); diff != "" {
		t.Errorf("reason details counted by upstream's Admit (-upstream +berth):\n%s", diff)
	}
	volumes := map[string]string{}
	for _, r := range returns(src.Func(upstreamAllocation, "disallowResizeForMemoryBackedVolumes"), 3) {
		volumes[r[1]] = r[2]
	}
	if got := volumes[msgMemoryBackedVolumes]; got != detailMemoryBackedVolumes {
		t.Errorf("upstream's disallowResizeForMemoryBackedVolumes gives %q the detail %q, berth %q (upstream's: %v)",
			msgMemoryBackedVolumes, got, detailMemoryBackedVolumes, volumes)
	}
	var swap []string
	for _, r := range returns(src.Func(upstreamAllocation, "disallowResizeForSwappableContainers"), 2) {
		if r[1] != "" {
			swap = append(swap, r[1])
		}
	}
	if !cmp.Equal(swap, []string{msgSwap}) {
		t.Errorf("upstream's swap messages %q, berth %q", swap, msgSwap)
	}
}

// TestRequestedMatchesUpstream pins what kubelet_container_requested_resizes_total
// counts to upstream's recordContainerResizeOperations (the resources and
// requirements, in its order) and resizeOperationForResources (the
// operations, in the order it tests them).
func TestRequestedMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	var up, berth []string
	for _, args := range labelCalls(src.Func(upstreamKubelet, "recordContainerResizeOperations"), "ContainerRequestedResizes") {
		up = append(up, args[0].AsString()+"/"+args[1].AsString())
	}
	for _, r := range requestedResources {
		berth = append(berth, string(r.resource)+"/"+r.requirement)
	}
	if diff := cmp.Diff(up, berth); diff != "" {
		t.Errorf("requested resources (-upstream +berth):\n%s", diff)
	}
	var ops []string
	for _, r := range returns(src.Func(upstreamKubelet, "resizeOperationForResources"), 1) {
		if r[0] != "" {
			ops = append(ops, r[0])
		}
	}
	if diff := cmp.Diff(ops, []string{opRemove, opAdd, opDecrease, opIncrease}); diff != "" {
		t.Errorf("operations (-upstream +berth):\n%s", diff)
	}
}
