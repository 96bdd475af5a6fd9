package credprovider

import (
	"go/ast"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestConstantsMatchUpstream pins berth's copies of upstream's plugin
// constants (pkg/credentialprovider/plugin/plugin.go): the global cache
// key, the purge interval of expired cache entries, and the exec timeout.
func TestConstantsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/credentialprovider/plugin"
	src := upstreamsrc.New(t)
	if got := src.Value(pkg, "globalCacheKey").AsString(); got != globalCacheKey {
		t.Errorf("globalCacheKey = %q, upstream %q", globalCacheKey, got)
	}
	if got := src.Value(pkg, "cachePurgeInterval").AsDuration(); got != cachePurgeInterval {
		t.Errorf("cachePurgeInterval = %v, upstream %v", cachePurgeInterval, got)
	}
	timeouts := src.Func(pkg, "ExecPlugin").Calls("context", "WithTimeout")
	if len(timeouts) != 1 {
		t.Fatalf("upstream ExecPlugin has %d context.WithTimeout calls, want 1: update berth", len(timeouts))
	}
	if got := timeouts[0].Arg(1).AsDuration(); got != DefaultExecTimeout {
		t.Errorf("DefaultExecTimeout = %v, upstream %v", DefaultExecTimeout, got)
	}
}

// TestVersionsMatchUpstream pins the versions berth accepts to upstream's:
// the exec API versions of its apiVersions map, and the
// kubelet.config.k8s.io versions its init adds to the config scheme. Both
// name packages by import alias (credentialproviderv1beta1,
// kubeletconfigv1alpha1, ...), whose suffix is the version.
func TestVersionsMatchUpstream(t *testing.T) {
	const pkg = "k8s.io/kubernetes/pkg/credentialprovider/plugin"
	src := upstreamsrc.New(t)
	var execVersions []string
	for _, e := range src.Value(pkg, "apiVersions").Elems() {
		kv := e.Node.(*ast.KeyValueExpr)
		alias := kv.Key.(*ast.CallExpr).Fun.(*ast.SelectorExpr).X.(*ast.SelectorExpr).X.(*ast.Ident).Name
		execVersions = append(execVersions, "credentialprovider.kubelet.k8s.io/"+strings.TrimPrefix(alias, "credentialprovider"))
	}
	var upConfig []string
	for _, call := range src.Func(pkg, "init").CallsTo(func(x, f string) bool {
		return f == "AddToScheme" && strings.HasPrefix(x, "kubeletconfigv")
	}) {
		alias := call.Node.(*ast.CallExpr).Fun.(*ast.SelectorExpr).X.(*ast.Ident).Name
		upConfig = append(upConfig, "kubelet.config.k8s.io/"+strings.TrimPrefix(alias, "kubeletconfig"))
	}
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	if diff := cmp.Diff(execVersions, execAPIVersions(), sorted); diff != "" {
		t.Errorf("exec API versions (-upstream +berth):\n%s", diff)
	}
	if diff := cmp.Diff(upConfig, slices.Collect(maps.Keys(configVersions())), sorted); diff != "" {
		t.Errorf("config versions (-upstream +berth):\n%s", diff)
	}
}
