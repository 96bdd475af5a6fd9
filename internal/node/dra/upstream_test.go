package dra

import (
	"go/ast"
	"slices"
	"testing"
	"time"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upDRA    = "k8s.io/kubernetes/pkg/kubelet/cm/dra"
	upPlugin = upDRA + "/plugin"
	upState  = upDRA + "/state"
)

// TestTablesMatchUpstream pins the services and their order, the
// numbers, the file name and the checkpoint's kind and version.
func TestTablesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value(upPlugin, "servicesSupportedByKubelet").AsStrings(); !slices.Equal(up, services) {
		t.Errorf("services %q, upstream %q", services, up)
	}
	for name, tc := range map[string]struct {
		ours time.Duration
		up   upstreamsrc.Node
	}{
		"call timeout": {callTimeout, src.Value(upPlugin, "defaultClientCallTimeout")},
		"wipe delay":   {WipeDelay, src.Value(upDRA, "defaultWipingDelay")},
	} {
		if up := tc.up.AsDuration(); up != tc.ours {
			t.Errorf("%s %v, upstream %v", name, tc.ours, up)
		}
	}
	for name, tc := range map[string]struct {
		ours string
		up   upstreamsrc.Node
	}{
		"state file":          {StateFileName, src.Value(upDRA, "draManagerStateFileName")},
		"checkpoint kind":     {checkpointKind, src.Value(upState, "CheckpointKind")},
		"checkpoint version":  {checkpointAPIVersion, src.Value(upState, "CheckpointAPIVersion")},
		"optional operations": {errSkipNodeOperations.Error(), src.Func(upDRA, "computeDriverStates").Calls("errors", "New")[0].Arg(0)},
	} {
		if up := tc.up.AsString(); up != tc.ours {
			t.Errorf("%s %q, upstream %q", name, tc.ours, up)
		}
	}
}

// TestWipeBackoffMatchesUpstream pins the retry of a wipe to the
// wait.Backoff literal of upstream's wipeResourceSlices.
func TestWipeBackoffMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	var fields map[string]upstreamsrc.Node
	for _, cl := range src.Func(upPlugin, "wipeResourceSlices").CompositeLits() {
		if sel, ok := cl.Node.(*ast.CompositeLit).Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Backoff" {
			fields = cl.Fields()
		}
	}
	if fields == nil {
		t.Fatal("upstream's wipeResourceSlices has no wait.Backoff literal")
	}
	if up := fields["Duration"].AsDuration(); up != wipeBackoff.Duration {
		t.Errorf("Duration %v, upstream %v", wipeBackoff.Duration, up)
	}
	if up := fields["Cap"].AsDuration(); up != wipeBackoff.Cap {
		t.Errorf("Cap %v, upstream %v", wipeBackoff.Cap, up)
	}
	if up := fields["Factor"].AsFloat(); up != wipeBackoff.Factor {
		t.Errorf("Factor %v, upstream %v", wipeBackoff.Factor, up)
	}
	if up := fields["Jitter"].AsFloat(); up != wipeBackoff.Jitter {
		t.Errorf("Jitter %v, upstream %v", wipeBackoff.Jitter, up)
	}
	if up := fields["Steps"].AsInt(); int(up) != wipeBackoff.Steps {
		t.Errorf("Steps %v, upstream %v", wipeBackoff.Steps, up)
	}
}

// TestMessagesMatchUpstream: the errors a pod's events show are
// upstream's literals (format strings).
func TestMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func(upDRA, "prepareResources").StringLiterals()
	lits = append(lits, src.Func(upDRA, "unprepareResources").StringLiterals()...)
	lits = append(lits, src.Func(upPlugin, "GetPlugin").StringLiterals()...)
	lits = append(lits, src.Func(upPlugin, "validateSupportedServices").StringLiterals()...)
	lits = append(lits, src.Func(upPlugin, "RegisterPlugin").StringLiterals()...)
	lits = append(lits, src.Func(upDRA, "PrepareResources").StringLiterals()...)
	lits = append(lits, src.Func(upDRA, "UnprepareResources").StringLiterals()...)
	for _, msg := range []string{
		"pod %s (%s) is not allowed to use ResourceClaim %s (%s)",
		"fetch ResourceClaim %s: %w",
		"ResourceClaim %s: %w",
		"old ResourceClaim with same name %s and different UID %s still exists (previous pod force-deleted?!)",
		"ResourceClaim %s is being unprepared",
		"NodePrepareResources: %w",
		"NodePrepareResources returned result for unknown claim UID %s",
		"NodePrepareResources failed for ResourceClaim %s: %s",
		"NodePrepareResources skipped %d ResourceClaims",
		"NodeUnprepareResources: %w",
		"NodeUnprepareResources returned result for unknown claim UID %s",
		"NodeUnprepareResources failed for ResourceClaim %s: %s",
		"NodeUnprepareResources skipped %d ResourceClaims",
		"DRA driver %s is not registered",
		"DRA driver name is empty",
		"empty list of supported gRPC services (aka supported versions)",
		"none of services supported by the plugin (%q) are supported by the kubelet (%q)",
		"invalid supported gRPC versions of DRA driver plugin %s at endpoint %s: %w",
		"prepare dynamic resources: %w",
		"unprepare dynamic resources: %w",
	} {
		if !slices.Contains(lits, msg) {
			t.Errorf("upstream has no literal %q", msg)
		}
	}
}
