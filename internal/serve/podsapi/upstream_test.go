package podsapi

import (
	"go/ast"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upPods    = "k8s.io/kubernetes/pkg/kubelet/apis/pods"
	upMetrics = "k8s.io/kubernetes/pkg/kubelet/metrics"
)

// TestEndpointMatchesUpstream pins the socket's directory and name and the
// rate limit to upstream's apis/pods constants and kubeletconfig default.
func TestEndpointMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value(upPods, "Socket").AsString(); got != Socket {
		t.Errorf("upstream socket %q, berth %q", got, Socket)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/kubeletconfig", "DefaultKubeletPodsAPIDirName").AsString(); got != DirName {
		t.Errorf("upstream directory %q, berth %q", got, DirName)
	}
	if got := src.Value(upPods, "DefaultQPS").AsInt(); got != DefaultQPS {
		t.Errorf("upstream QPS %d, berth %d", got, DefaultQPS)
	}
	if got := src.Value(upPods, "DefaultBurstTokens").AsInt(); got != DefaultBurst {
		t.Errorf("upstream burst %d, berth %d", got, DefaultBurst)
	}
}

// TestBoundsMatchUpstream pins the broadcaster's queue and a watcher's
// buffer to the channel sizes upstream makes.
func TestBoundsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for fn, want := range map[string]int64{"NewBroadcaster": queueSize, "WatchPods": watcherBuffer} {
		sizes := makeSizes(src.Func(upPods, fn))
		if !cmp.Equal(sizes, []int64{want}) {
			t.Errorf("upstream %s makes buffered channels of %v, berth %d", fn, sizes, want)
		}
	}
}

// makeSizes are the sizes of the make(chan T, n) calls in fn.
func makeSizes(fn upstreamsrc.Node) []int64 {
	var out []int64
	ast.Inspect(fn.Node, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "make" {
			if _, ok := call.Args[0].(*ast.ChanType); ok {
				out = append(out, fn.Sub(call.Args[1]).AsInt())
			}
		}
		return true
	})
	return out
}

// TestMessagesMatchUpstream: the errors and the fallback Ready condition
// berth writes are upstream's words, in the functions that write them.
func TestMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for fn, msgs := range map[string][]string{
		"validateReady":         {"Kubelet is initializing"},
		"GetPod":                {"pod with UID %s not found", "failed to marshal pod: %v"},
		"ListPods":              {"failed to marshal pod: %v"},
		"WatchPods":             {"watch client channel closed", "error marshalling watch event pod: %v"},
		"getEffectivePodStatus": {"ContainersNotReady", "Kubelet is initializing pod containers"},
	} {
		lits := src.Func(upPods, fn).StringLiterals()
		for _, m := range msgs {
			if !slices.Contains(lits, m) {
				t.Errorf("upstream %s does not write %q", fn, m)
			}
		}
	}
}

// TestMetricsMatchUpstream pins the metrics' names, help and labels.
func TestMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	up := map[string]string{}
	for _, v := range []string{"PodWatchEventsDroppedTotal", "PodRequestsTotal", "PodRequestsList", "PodRequestsGet", "PodRequestsWatch"} {
		lits := src.Value(upMetrics, v).CompositeLits()
		opts := lits[0].Fields()
		name := opts["Name"].AsString()
		up[name] = opts["Help"].AsString()
		if v == "PodWatchEventsDroppedTotal" {
			continue
		}
		if labels := lits[len(lits)-1].AsStrings(); !cmp.Equal(labels, requestLabels) {
			t.Errorf("upstream %s labels %v, berth %v", name, labels, requestLabels)
		}
	}
	if diff := cmp.Diff(up, metricHelp); diff != "" {
		t.Errorf("metrics differ from upstream's (-upstream +berth):\n%s", diff)
	}
}
