package declaredfeatures

import (
	"go/ast"
	"go/token"
	"slices"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamLifecycle = "k8s.io/kubernetes/pkg/kubelet/lifecycle"

// TestReasonMatchesUpstream pins the rejection's reason and the messages'
// formats to upstream's DeclaredFeaturesAdmitHandler.
func TestReasonMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value(upstreamLifecycle, "PodFeatureUnsupported").AsString(); up != ReasonPodFeatureUnsupported {
		t.Errorf("ReasonPodFeatureUnsupported %q, upstream %q", ReasonPodFeatureUnsupported, up)
	}
	var formats []string
	for _, f := range src.Files(upstreamLifecycle) {
		for _, call := range f.Calls("fmt", "Sprintf") {
			if lit, ok := stringArg(call); ok {
				formats = append(formats, lit)
			}
		}
	}
	for _, berth := range []string{msgInferFailed, msgMatchFailed, msgUnavailable} {
		if !slices.Contains(formats, berth) {
			t.Errorf("upstream's lifecycle package formats no message %q: update admit.go", berth)
		}
	}
}

// stringArg returns a call's first argument when it is a string literal.
func stringArg(call upstreamsrc.Node) (string, bool) {
	arg := call.Arg(0)
	if lit, ok := arg.Node.(*ast.BasicLit); !ok || lit.Kind != token.STRING {
		return "", false
	}
	return arg.AsString(), true
}
