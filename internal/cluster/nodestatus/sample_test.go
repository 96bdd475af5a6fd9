package nodestatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

func TestSplitReason(t *testing.T) {
	tests := []struct{ in, reason, message string }{
		{"NetworkPluginNotReady: cni config uninitialized", "NetworkPluginNotReady", "cni config uninitialized"},
		{"no reason given", "", "no reason given"},
		{"", "", ""},
		{"A: b: c", "A", "b: c"},
	}
	for _, tc := range tests {
		r, m := splitReason(tc.in)
		if r != tc.reason || m != tc.message {
			t.Errorf("splitReason(%q) = %q, %q; want %q, %q", tc.in, r, m, tc.reason, tc.message)
		}
	}
}

func TestRuntimeHandlersOfTheRuntimeStatus(t *testing.T) {
	got := runtimeHandlers([]cri.RuntimeHandler{{Name: "", UserNamespaces: true, RecursiveReadOnlyMounts: true}, {Name: "kata"}})
	want := []corev1.NodeRuntimeHandler{
		{Name: "", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: new(true), UserNamespaces: new(true)}},
		{Name: "kata", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: new(false), UserNamespaces: new(false)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runtime handlers (-want +got):\n%s", diff)
	}
	if got := runtimeHandlers(nil); got != nil {
		t.Errorf("no handlers reported (containerd 1.6): %v, want none", got)
	}
}
