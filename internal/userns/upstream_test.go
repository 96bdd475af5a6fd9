package userns

import (
	"testing"

	"github.com/berthk8s/berth/internal/upstreamsrc"
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
