package sysctl

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamPkg = "k8s.io/kubernetes/pkg/kubelet/sysctl"

// upstreamSafe reads upstream's safe sysctl table, kernel releases
// resolved from pkg/util/kernel.
func upstreamSafe(t *testing.T) []safe {
	var out []safe
	for _, e := range upstreamsrc.New(t).Value(upstreamPkg, "safeSysctls").Elems() {
		f := e.Fields()
		s := safe{Name: f["name"].AsString()}
		if k, ok := f["kernel"]; ok {
			s.Kernel = k.AsString()
		}
		out = append(out, s)
	}
	return out
}

// TestSafeMatchesUpstream pins safeSysctls to upstream's table.
func TestSafeMatchesUpstream(t *testing.T) {
	if diff := cmp.Diff(upstreamSafe(t), safeSysctls); diff != "" {
		t.Errorf("safeSysctls differ from upstream's %s/safe_sysctls.go (-upstream +berth):\n%s", upstreamPkg, diff)
	}
}

// TestGatingMatchesUpstream checks SafeAllowlist against upstream's rule
// (getSafeSysctlAllowlist) over upstream's table: a gated sysctl is kept
// when the release parses and is at least the sysctl's release. The
// releases include this node's own.
func TestGatingMatchesUpstream(t *testing.T) {
	table := upstreamSafe(t)
	releases := []string{"", "x", "3.15", "3.16.0", "4.5.7", "4.6.0-rc1", "4.14", "4.15.0-20-generic", "6.12.48+deb13-amd64"}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		releases = append(releases, strings.TrimSpace(string(b)))
	}
	for _, rel := range releases {
		kernel, _ := version.ParseGeneric(rel)
		var want []string
		for _, s := range table {
			if s.Kernel == "" || kernel != nil && kernel.AtLeast(version.MustParseGeneric(s.Kernel)) {
				want = append(want, s.Name)
			}
		}
		if diff := cmp.Diff(sorted(want), sorted(keys(SafeAllowlist(rel)))); diff != "" {
			t.Errorf("SafeAllowlist(%q) (-upstream +berth):\n%s", rel, diff)
		}
	}
}
