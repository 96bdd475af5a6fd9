package nodestatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestDefaultLabelsMatchUpstream pins the labels reconciled onto an
// existing Node, and the attach/detach annotation, to upstream's.
func TestDefaultLabelsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lists := src.Func("k8s.io/kubernetes/pkg/kubelet", "updateDefaultLabels").CompositeLits()
	if len(lists) == 0 {
		t.Fatal("upstream updateDefaultLabels has no label list: update berth")
	}
	if diff := cmp.Diff(lists[0].AsStrings(), defaultLabels()); diff != "" {
		t.Errorf("defaultLabels differ from upstream's updateDefaultLabels (-upstream +berth):\n%s", diff)
	}
	up := src.Value("k8s.io/kubernetes/pkg/volume/util", "ControllerManagedAttachAnnotation").AsString()
	if up != AnnotationControllerManagedAttach {
		t.Errorf("AnnotationControllerManagedAttach %q, upstream %q", AnnotationControllerManagedAttach, up)
	}
}

// TestCloudProviderNamesMatchUpstream pins the external cloud provider's
// taint and node IP annotation to k8s.io/cloud-provider's.
func TestCloudProviderNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ name, berth string }{
		{"TaintExternalCloudProvider", TaintExternalCloudProvider},
		{"AnnotationAlphaProvidedIPAddr", AnnotationProvidedNodeIP},
	} {
		if up := src.Value("k8s.io/cloud-provider/api", tt.name).AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream %q", tt.name, tt.berth, up)
		}
	}
}
