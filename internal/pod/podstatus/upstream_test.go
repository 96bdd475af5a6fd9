package podstatus

import (
	"go/ast"
	"slices"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestReasonsMatchUpstream pins the condition reasons to upstream's
// pkg/kubelet/status.
func TestReasonsMatchUpstream(t *testing.T) {
	const status = "k8s.io/kubernetes/pkg/kubelet/status"
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, name string }{
		{ReasonPodCompleted, "PodCompleted"},
		{ReasonPodFailed, "PodFailed"},
		{ReasonContainersNotReady, "ContainersNotReady"},
		{ReasonContainersNotInitialized, "ContainersNotInitialized"},
		{ReasonReadinessGatesNotReady, "ReadinessGatesNotReady"},
		{ReasonRestartAllContainersStarted, "RestartAllContainersStarted"},
	} {
		if up := src.Value(status, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, status, tt.name, up)
		}
	}
}

// TestConditionMessagesMatchUpstream pins the message formats of the
// conditions berth shares with upstream to the literals of upstream's
// generators (pkg/kubelet/status), and PodReadyToStartContainers's reason
// (pkg/kubelet/types).
func TestConditionMessagesMatchUpstream(t *testing.T) {
	const status = "k8s.io/kubernetes/pkg/kubelet/status"
	src := upstreamsrc.New(t)
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/types", "PodSandboxNotReadyReason").AsString(); up != ReasonPodSandboxNotReady {
		t.Errorf("berth %q, upstream PodSandboxNotReadyReason %q", ReasonPodSandboxNotReady, up)
	}
	for _, tt := range []struct {
		fn   string
		msgs []string
	}{
		{"GeneratePodInitializedCondition", []string{msgUnknownStatus, msgIncompleteStatus}},
		{"GenerateContainersReadyCondition", []string{msgUnknownStatus, msgUnreadyStatus}},
		{"GeneratePodReadyCondition", []string{msgGateMissing, msgGateNotTrue}},
	} {
		lits := src.Func(status, tt.fn).StringLiterals()
		for _, m := range tt.msgs {
			if !slices.Contains(lits, m) {
				t.Errorf("upstream %s has no literal %q (it has %q)", tt.fn, m, lits)
			}
		}
	}
}

// TestRestartAllContainersMatchesUpstream pins what berth writes during a
// RestartAllContainers restart to upstream's text: the container reason
// and message (pkg/kubelet), the condition's message (pkg/kubelet/status).
func TestRestartAllContainersMatchesUpstream(t *testing.T) {
	const (
		kubelet = "k8s.io/kubernetes/pkg/kubelet"
		status  = "k8s.io/kubernetes/pkg/kubelet/status"
	)
	src := upstreamsrc.New(t)
	if up := src.Value(kubelet, "RestartingAllContainers").AsString(); up != ReasonRestartingAllContainers {
		t.Errorf("berth %q, upstream %s.RestartingAllContainers %q", ReasonRestartingAllContainers, kubelet, up)
	}
	lits := withReason(src.Func(kubelet, "convertToAPIContainerStatuses"), "RestartingAllContainers")
	if len(lits) != 2 {
		t.Fatalf("upstream convertToAPIContainerStatuses: %d literals with Reason RestartingAllContainers and a Message, want 2 (waiting, terminated)", len(lits))
	}
	for _, f := range lits {
		if up := f["Message"].AsString(); up != msgRestartingAll {
			t.Errorf("container message: berth %q, upstream %q", msgRestartingAll, up)
		}
		if code, ok := f["ExitCode"]; ok && code.AsInt() != exitCodeUnknown {
			t.Errorf("exit code: berth %d, upstream %d", exitCodeUnknown, code.AsInt())
		}
	}
	lits = withReason(src.Func(status, "GenerateAllContainersRestartingCondition"), "RestartAllContainersStarted")
	if len(lits) != 1 {
		t.Fatalf("upstream GenerateAllContainersRestartingCondition: %d literals with Reason RestartAllContainersStarted, want 1", len(lits))
	}
	if up := lits[0]["Message"].AsString(); up != msgRestartAllContainersStarted {
		t.Errorf("condition message: berth %q, upstream %q", msgRestartAllContainersStarted, up)
	}
}

// withReason returns the fields of the keyed struct literals in n whose
// Reason is the name reason and that have a Message.
func withReason(n upstreamsrc.Node, reason string) []map[string]upstreamsrc.Node {
	var out []map[string]upstreamsrc.Node
	for _, lit := range n.CompositeLits() {
		if !keyed(lit.Node.(*ast.CompositeLit)) {
			continue
		}
		f := lit.Fields()
		r, ok := f["Reason"]
		if id, isName := r.Node.(*ast.Ident); !ok || !isName || id.Name != reason {
			continue
		}
		if _, ok := f["Message"]; ok {
			out = append(out, f)
		}
	}
	return out
}

// keyed reports whether every element of a composite literal is name: value.
func keyed(cl *ast.CompositeLit) bool {
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return false
		}
		if _, ok := kv.Key.(*ast.Ident); !ok {
			return false
		}
	}
	return len(cl.Elts) > 0
}
