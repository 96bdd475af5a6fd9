package objectcache

import (
	"go/ast"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestTimesMatchUpstream pins the Cache strategy's default TTL, the
// Watch strategy's bound on waiting for a first list and its minimum watch
// timeout to upstream's managers.
func TestTimesMatchUpstream(t *testing.T) {
	const (
		manager   = "k8s.io/kubernetes/pkg/kubelet/util/manager"
		secrets   = "k8s.io/kubernetes/pkg/kubelet/secret"
		configMap = "k8s.io/kubernetes/pkg/kubelet/configmap"
	)
	src := upstreamsrc.New(t)
	for _, pkg := range []string{secrets, configMap} {
		if up := src.Value(pkg, "defaultTTL").AsDuration(); up != DefaultTTL {
			t.Errorf("DefaultTTL %v, upstream %s.defaultTTL %v", DefaultTTL, pkg, up)
		}
	}
	var polls []upstreamsrc.Node
	for _, f := range src.Files(manager) {
		polls = append(polls, f.Calls("wait", "PollImmediate")...)
	}
	if len(polls) != 1 {
		t.Fatalf("upstream %s has %d wait.PollImmediate calls, want the one of objectCache.Get: update the test", manager, len(polls))
	}
	if up := polls[0].Arg(1).AsDuration(); up != syncTimeout {
		t.Errorf("syncTimeout %v, upstream objectCache.Get polls for %v", syncTimeout, up)
	}
	var found bool
	for _, lit := range src.Func(manager, "newReflectorLocked").CompositeLits() {
		if typ, ok := lit.Node.(*ast.CompositeLit).Type.(*ast.SelectorExpr); !ok || typ.Sel.Name != "ReflectorOptions" {
			continue
		}
		if v, ok := lit.Fields()["MinWatchTimeout"]; ok {
			found = true
			if up := v.AsDuration(); up != minWatchTimeout {
				t.Errorf("minWatchTimeout %v, upstream newReflectorLocked's %v", minWatchTimeout, up)
			}
		}
	}
	if !found {
		t.Errorf("upstream newReflectorLocked sets no MinWatchTimeout: update the test")
	}
}
