package userns

import (
	"fmt"
	"slices"
	"testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestValuesMatchUpstream pins the names and numbers berth shares with
// upstream's user namespace manager: the mappings file's name (a pod
// directory written by one is read by the other), the unit and default
// lengths, and the user whose subordinate IDs are the range.
func TestValuesMatchUpstream(t *testing.T) {
	const (
		userns  = "k8s.io/kubernetes/pkg/kubelet/userns"
		kubelet = "k8s.io/kubernetes/pkg/kubelet"
		config  = "k8s.io/kubernetes/pkg/kubelet/kubeletconfig"
	)
	src := upstreamsrc.New(t)
	if up := src.Value(userns, "mappingsFile").AsString(); up != MappingsFile {
		t.Errorf("mappings file %q, upstream %q", MappingsFile, up)
	}
	if up := src.Value(kubelet, "kubeletUser").AsString(); up != KubeletUser {
		t.Errorf("kubelet user %q, upstream %q", KubeletUser, up)
	}
	if up := src.Value(userns, "userNsUnitLength").AsInt(); up != unitLength {
		t.Errorf("unit length %d, upstream %d", unitLength, up)
	}
	if up := src.Value(config, "DefaultKubeletUserNamespacesIDsPerPod").AsInt(); up != DefaultIDsPerPod {
		t.Errorf("default IDs per pod %d, upstream %d", DefaultIDsPerPod, up)
	}
}

// TestRefusalMatchesUpstream pins the refusal of a hostUsers: false pod
// on a runtime (handler) without user namespaces to the literals of
// upstream's GetOrCreateUserNamespaceMappings, and the unknown handler's.
func TestRefusalMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func("k8s.io/kubernetes/pkg/kubelet/userns", "GetOrCreateUserNamespaceMappings").StringLiterals()
	lits = append(lits, src.Func("k8s.io/kubernetes/pkg/kubelet", "HandlerSupportsUserNamespaces").StringLiterals()...)
	for _, tc := range []struct {
		handlers []cri.RuntimeHandler
		handler  string
		upstream []string // the literals the message is made of
	}{
		{upstream: []string{"can't set `spec.hostUsers: false`, runtime does not support user namespaces"}},
		{handlers: []cri.RuntimeHandler{{Name: "kata"}}, handler: "kata",
			upstream: []string{"can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces"}},
		{handlers: []cri.RuntimeHandler{{Name: ""}}, handler: "kata",
			upstream: []string{"can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces", "%v: %w", "the handler %q is not known"}},
	} {
		for _, lit := range tc.upstream {
			if !slices.Contains(lits, lit) {
				t.Errorf("upstream has no literal %q any more", lit)
			}
		}
		want := tc.upstream[0]
		if tc.handler != "" {
			want = fmt.Sprintf(want, tc.handler)
		}
		if len(tc.upstream) == 3 {
			want = fmt.Errorf(tc.upstream[1], want, fmt.Errorf(tc.upstream[2], tc.handler)).Error()
		}
		if got := errText(HandlerSupports(tc.handlers, tc.handler)); got != want {
			t.Errorf("HandlerSupports(%v, %q) = %q, upstream %q", tc.handlers, tc.handler, got, want)
		}
	}
}
