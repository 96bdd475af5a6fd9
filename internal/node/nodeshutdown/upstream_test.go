package nodeshutdown

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestUpstreamValues pins the words and numbers berth shares with
// upstream's node shutdown manager.
func TestUpstreamValues(t *testing.T) {
	src := upstreamsrc.New(t)
	const pkg = "k8s.io/kubernetes/pkg/kubelet/nodeshutdown"
	for name, want := range map[string]string{
		"nodeShutdownReason":             Reason,
		"nodeShutdownMessage":            Message,
		"NodeShutdownNotAdmittedReason":  NotAdmittedReason,
		"nodeShutdownNotAdmittedMessage": NotAdmittedMessage,
	} {
		if got := src.Value(pkg, name).AsString(); got != want {
			t.Errorf("%s = %q upstream, %q in berth", name, got, want)
		}
	}
	const sched = "k8s.io/kubernetes/pkg/apis/scheduling"
	if got := src.Value(sched, "DefaultPriorityWhenNoDefaultClassExists").AsInt(); got != int64(defaultPriority) {
		t.Errorf("DefaultPriorityWhenNoDefaultClassExists = %d upstream, %d in berth", got, defaultPriority)
	}
	if got := src.Value(sched, "SystemCriticalPriority").AsInt(); got != int64(systemCriticalPriority) {
		t.Errorf("SystemCriticalPriority = %d upstream, %d in berth", got, systemCriticalPriority)
	}
}
