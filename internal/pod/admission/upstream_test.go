package admission

import (
	"go/ast"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestSysctlsMatchUpstream pins the sysctl admission's reason and the
// wording of its messages to upstream's (pkg/kubelet/sysctl allowlist.go:
// Admit's "forbidden sysctl: %v" over validateSysctl's errors).
func TestSysctlsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/kubelet/sysctl"
	src := upstreamsrc.New(t)
	if up := src.Value(pkg, "ForbiddenReason").AsString(); up != ReasonSysctlForbidden {
		t.Errorf("reason: berth %q, upstream %q", ReasonSysctlForbidden, up)
	}
	admit := src.Func(pkg, "Admit").Calls("fmt", "Sprintf")
	if len(admit) != 1 || admit[0].Arg(0).AsString() != "forbidden sysctl: %v" {
		t.Errorf("upstream's Admit no longer formats its message as %q", "forbidden sysctl: %v")
	}
	var formats []string
	for _, call := range src.Func(pkg, "validateSysctl").Calls("fmt", "Errorf") {
		if f, ok := stringArg(call); ok {
			formats = append(formats, f)
		}
	}
	if len(formats) != 1 || formats[0] != "%q not allowlisted" {
		t.Errorf("upstream's validateSysctl literal formats %q, want [%q]", formats, "%q not allowlisted")
	}
}

// stringArg is a call's first argument when it is a string literal
// (validateSysctl's host-namespace errors take a local format variable).
func stringArg(call upstreamsrc.Node) (string, bool) {
	if _, ok := call.Arg(0).Node.(*ast.BasicLit); !ok {
		return "", false
	}
	return call.Arg(0).AsString(), true
}
