package podresources

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/serve/localgrpc"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upPodResources = "k8s.io/kubernetes/pkg/kubelet/apis/podresources"
	upMetrics      = "k8s.io/kubernetes/pkg/kubelet/metrics"
)

// TestEndpointMatchesUpstream pins the socket's directory and name, the
// rate limit and its error, and the socket directory's mode to upstream's
// (the apis/podresources constants, the kubeletconfig default, apis/grpc
// and k8s.io/cri-client's CreateListener).
func TestEndpointMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if got := src.Value(upPodResources, "Socket").AsString(); got != Socket {
		t.Errorf("upstream socket %q, berth %q", got, Socket)
	}
	if got := src.Value("k8s.io/kubernetes/pkg/kubelet/kubeletconfig", "DefaultKubeletPodResourcesDirName").AsString(); got != DirName {
		t.Errorf("upstream directory %q, berth %q", got, DirName)
	}
	if got := src.Value(upPodResources, "DefaultQPS").AsInt(); got != DefaultQPS {
		t.Errorf("upstream QPS %d, berth %d", got, DefaultQPS)
	}
	if got := src.Value(upPodResources, "DefaultBurstTokens").AsInt(); got != DefaultBurst {
		t.Errorf("upstream burst %d, berth %d", got, DefaultBurst)
	}
	limit := src.Value("k8s.io/kubernetes/pkg/kubelet/apis/grpc", "ErrorLimitExceeded")
	if code := selName(limit.Arg(0).Node); code != "ResourceExhausted" {
		t.Errorf("upstream rate limit error's code %q, berth's ResourceExhausted", code)
	}
	if got := localgrpc.ErrLimitExceeded.Error(); !strings.HasSuffix(got, "desc = "+limit.StringLiterals()[0]) || !strings.Contains(got, "ResourceExhausted") {
		t.Errorf("berth's rate limit error %q, upstream's message %q (ResourceExhausted)", got, limit.StringLiterals()[0])
	}
	mkdir := src.Func("k8s.io/cri-client/pkg/util", "CreateListener").Calls("os", "MkdirAll")
	if len(mkdir) != 1 || mkdir[0].Arg(1).AsInt() != localgrpc.DirMode {
		t.Errorf("upstream CreateListener's MkdirAll calls %d, berth's mode %o", len(mkdir), localgrpc.DirMode)
	}
}

// TestGetErrorMatchesUpstream pins Get's error for a pod that is not
// there to upstream's message.
func TestGetErrorMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	calls := src.Func(upPodResources, "Get").Calls("fmt", "Errorf")
	if len(calls) != 1 {
		t.Fatalf("upstream Get has %d fmt.Errorf calls, want 1", len(calls))
	}
	if got, want := calls[0].Arg(0).AsString(), "pod %s in namespace %s not found"; got != want {
		t.Errorf("upstream Get's error %q, berth's %q", got, want)
	}
}

// TestMetricsMatchUpstream pins each endpoint metric's name, help and
// labels to upstream's pkg/kubelet/metrics.
func TestMetricsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	vars := []string{
		"PodResourcesEndpointRequestsTotalCount", "PodResourcesEndpointRequestsListCount",
		"PodResourcesEndpointRequestsGetAllocatableCount", "PodResourcesEndpointErrorsListCount",
		"PodResourcesEndpointErrorsGetAllocatableCount", "PodResourcesEndpointRequestsGetCount",
		"PodResourcesEndpointErrorsGetCount",
	}
	up := map[string]string{}
	for _, v := range vars {
		lits := src.Value(upMetrics, v).CompositeLits()
		opts := lits[0].Fields()
		name := opts["Name"].AsString()
		up[name] = opts["Help"].AsString()
		if labels := lits[len(lits)-1].AsStrings(); !cmp.Equal(labels, []string{versionLabel}) {
			t.Errorf("upstream %s labels %v, berth [%s]", name, labels, versionLabel)
		}
		if stab := selName(opts["StabilityLevel"].Node); stab != "ALPHA" {
			t.Errorf("upstream %s is %s, berth's help says ALPHA", name, stab)
		}
	}
	if diff := cmp.Diff(up, endpointMetricSpecs); diff != "" {
		t.Errorf("metric names and help differ from upstream's (-upstream +berth):\n%s", diff)
	}
}

// selName is the selected name of pkg.Name ("" for anything else).
func selName(n ast.Node) string {
	if sel, ok := n.(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}
