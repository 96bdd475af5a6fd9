package config

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
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

// berthOnlyFlags are flags berth accepts that upstream's kubelet no longer
// registers, each with why berth keeps it. TestFlagsMatchUpstream fails
// when one of them comes back upstream or a new one appears.
var berthOnlyFlags = map[string]string{
	// Removed upstream, where the runtime chooses the sandbox image; berth
	// still uses it to keep that image from image garbage collection.
	"pod-infra-container-image": "removed upstream",
}

// upstreamFlags returns the names of the flags the upstream kubelet
// registers: the second argument of every fs.XxxVar(P) call in its options
// package, and in component-base's logging options (-v).
func upstreamFlags(t *testing.T) map[string]bool {
	src := upstreamsrc.New(t)
	out := map[string]bool{}
	for _, pkg := range []string{"k8s.io/kubernetes/cmd/kubelet/app/options", "k8s.io/component-base/logs/api/v1"} {
		for _, f := range src.Files(pkg) {
			calls := f.CallsTo(func(_, fn string) bool { return strings.HasSuffix(fn, "Var") || strings.HasSuffix(fn, "VarP") })
			for _, c := range calls {
				call := c.Node.(*ast.CallExpr)
				if len(call.Args) < 2 {
					continue
				}
				if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, err := strconv.Unquote(lit.Value)
					if err == nil {
						out[name] = true
					}
				}
			}
		}
	}
	if !out["root-dir"] || !out["v"] {
		t.Fatalf("found %d upstream flags without root-dir or v: upstream registers its flags differently, update the test", len(out))
	}
	return out
}

// TestFlagsMatchUpstream checks that every flag berth accepts is one the
// upstream kubelet registers, but for berthOnlyFlags.
func TestFlagsMatchUpstream(t *testing.T) {
	upstream := upstreamFlags(t)
	for _, f := range flagSupport() {
		name := strings.TrimPrefix(f.Name, "--")
		why, berthOnly := berthOnlyFlags[name]
		switch {
		case berthOnly && upstream[name]:
			t.Errorf("--%s is upstream's again: drop it from berthOnlyFlags (%s)", name, why)
		case !berthOnly && !upstream[name]:
			t.Errorf("--%s is not an upstream kubelet flag", name)
		}
	}
}
