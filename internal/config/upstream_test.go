package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/upstreamsrc"
)

// TestKubernetesVersionIsPinned holds berth to one upstream: the release
// it claims to stand in for is the k8s.io/kubernetes that tools/kube pins
// (whose source the other pinned-table tests read), and the staging
// modules berth builds against are that release's.
func TestKubernetesVersionIsPinned(t *testing.T) {
	src := upstreamsrc.New(t)
	if v := src.Version("k8s.io/kubernetes"); v != KubernetesVersion {
		t.Errorf("KubernetesVersion is %s, tools/kube pins k8s.io/kubernetes %s", KubernetesVersion, v)
	}
	for _, mod := range []string{
		"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/component-base",
		"k8s.io/component-helpers", "k8s.io/cri-api", "k8s.io/kubelet",
	} {
		if own, up := src.BerthVersion(mod), src.Version(mod); own != up {
			t.Errorf("berth builds against %s %s, upstream %s requires %s", mod, own, KubernetesVersion, up)
		}
	}
}

// TestDefaultsMatchUpstream pins the upstream defaults berth copies that
// upstream keeps as data: the hard eviction thresholds and the root and
// certificate directories of the kubelet's flags.
func TestDefaultsMatchUpstream(t *testing.T) {
	const options = "k8s.io/kubernetes/cmd/kubelet/app/options"
	src := upstreamsrc.New(t)
	up := src.Value("k8s.io/kubernetes/pkg/kubelet/eviction", "DefaultEvictionHard").AsStringMap()
	if diff := cmp.Diff(up, defaultEvictionHard()); diff != "" {
		t.Errorf("evictionHard defaults differ from upstream's DefaultEvictionHard (-upstream +berth):\n%s", diff)
	}
	flags := src.Func(options, "NewKubeletFlags").CompositeLits()[0].Fields()
	for _, tt := range []struct{ field, berth string }{
		{"RootDirectory", DefaultRootDir},
		{"CertDirectory", DefaultCertDir},
	} {
		if up := flags[tt.field].AsString(); up != tt.berth {
			t.Errorf("%s: berth %q, upstream NewKubeletFlags %q", tt.field, tt.berth, up)
		}
	}
}
