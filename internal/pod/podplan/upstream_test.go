package podplan

import (
	"go/ast"
	"slices"
	"strings"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestReasonsMatchUpstream pins the kill reasons, the CrashLoopBackOff
// and CreateContainerConfigError waiting reasons, the active deadline's
// status reason and message and the Killing message of a
// RestartAllContainers reset to
// upstream's (pkg/kubelet/kuberuntime, pkg/kubelet/container).
func TestReasonsMatchUpstream(t *testing.T) {
	const (
		runtime   = "k8s.io/kubernetes/pkg/kubelet/kuberuntime"
		container = "k8s.io/kubernetes/pkg/kubelet/container"
		kubelet   = "k8s.io/kubernetes/pkg/kubelet" // active_deadline.go
	)
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, pkg, name string }{
		{KillReasonLivenessProbe, runtime, "reasonLivenessProbe"},
		{KillReasonStartupProbe, runtime, "reasonStartupProbe"},
		{KillReasonUnknown, runtime, "reasonUnknown"},
		{KillReasonRestartAllContainers, runtime, "reasonRestartAllContainers"},
		{WaitingReasonCrashLoopBackOff, container, "ErrCrashLoopBackOff"},
		{WaitingReasonCreateContainerConfigError, runtime, "ErrCreateContainerConfig"},
		{ReasonDeadlineExceeded, kubelet, "reason"},
		{MessageDeadlineExceeded, kubelet, "message"},
	} {
		if up := src.Value(tt.pkg, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, tt.pkg, tt.name, up)
		}
	}
	// SyncPod's reset: m.killContainer(ctx, pod, id, name, message,
	// reasonRestartAllContainers, ...).
	var messages []string
	kills := src.Func(runtime, "SyncPod").CallsTo(func(x, f string) bool { return x == "m" && f == "killContainer" })
	for _, call := range kills {
		if id, ok := call.Arg(5).Node.(*ast.Ident); ok && id.Name == "reasonRestartAllContainers" {
			messages = append(messages, call.Arg(4).AsString())
		}
	}
	if len(messages) != 1 || messages[0] != KillMessageRestartAllContainers {
		t.Errorf("RestartAllContainers kill message: berth %q, upstream %q", KillMessageRestartAllContainers, messages)
	}
}

// TestSandboxMessagesMatchUpstream pins DecideSandbox's reasons to
// upstream's PodReadyToStartContainers messages (pkg/kubelet/types), and
// their order to upstream's PodSandboxChanged: the messages it returns,
// in source order.
func TestSandboxMessagesMatchUpstream(t *testing.T) {
	const types = "k8s.io/kubernetes/pkg/kubelet/types"
	src := upstreamsrc.New(t)
	order := []struct{ berth, name string }{
		{SandboxNotReadyMsgNoPodSandbox, "PodSandboxNotReadyMsgNoPodSandbox"},
		{SandboxNotReadyMsgMultipleSandboxes, "PodSandboxNotReadyMsgMultipleSandboxes"},
		{SandboxNotReadyMsgSandboxNotReady, "PodSandboxNotReadyMsgSandboxNotReady"},
		{SandboxNotReadyMsgNetworkNamespaceMode, "PodSandboxNotReadyMsgNetworkNamespaceMode"},
		{SandboxNotReadyMsgNoIPAddress, "PodSandboxNotReadyMsgNoIPAddress"},
	}
	for _, tt := range order {
		if up := src.Value(types, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, types, tt.name, up)
		}
	}
	var got []string
	ast.Inspect(src.Func("k8s.io/kubernetes/pkg/kubelet/kuberuntime/util", "PodSandboxChanged").Node, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "PodSandboxNotReadyMsg") {
			got = append(got, sel.Sel.Name)
		}
		return true
	})
	var want []string
	for _, tt := range order {
		want = append(want, tt.name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("upstream PodSandboxChanged checks in the order %q, berth %q", got, want)
	}
}
