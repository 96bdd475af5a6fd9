package volume

import (
	"go/ast"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upOpExec = "k8s.io/kubernetes/pkg/volume/util/operationexecutor"
	upVolUtl = "k8s.io/kubernetes/pkg/volume/util"
)

// TestExpandWordsMatchUpstream pins the expansion's event reasons and
// messages to upstream's kubelet (berth wraps with %w where upstream
// formats with %v).
func TestExpandWordsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for ours, name := range map[string]string{
		reasonVolumeResizeFailed:      "VolumeResizeFailed",
		reasonFileSystemResizeFailed:  "FileSystemResizeFailed",
		reasonFileSystemResizeSuccess: "FileSystemResizeSuccess",
	} {
		if up := src.Value("k8s.io/kubernetes/pkg/kubelet/events", name).AsString(); up != ours {
			t.Errorf("upstream's %s %q, ours %q", name, up, ours)
		}
	}
	if up := src.Value("k8s.io/kubernetes/pkg/volume/util/types", "NodeExpansionNotRequired").AsString(); up != nodeExpansionNotRequired {
		t.Errorf("upstream's NodeExpansionNotRequired %q, ours %q", up, nodeExpansionNotRequired)
	}
	for _, tc := range []struct {
		pkg  string
		msgs []string
	}{
		{upOpExec, []string{
			msgVolume, msgExpandSucceeded, msgExpandFailed, msgReadOnly, msgOnlineFailed, msgMountFailed, msgMapFailed,
			msgGetPVC, msgUpdateLegacy, msgUpdateRecovery,
		}},
		{upVolUtl, []string{msgNodeResizeError, msgPatchPVC}},
	} {
		var lits []string
		for _, f := range src.Files(tc.pkg) {
			lits = append(lits, f.StringLiterals()...)
		}
		for _, msg := range tc.msgs {
			if up := strings.ReplaceAll(msg, "%w", "%v"); !slices.Contains(lits, up) && !slices.Contains(lits, msg) {
				t.Errorf("upstream's %s has no literal %q", tc.pkg, up)
			}
		}
	}
}

// TestResizeConditionsMatchUpstream: the resize conditions a finished
// expansion clears are upstream's knownResizeConditions.
func TestResizeConditionsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	var up []string
	for _, e := range src.Value(upVolUtl, "knownResizeConditions").Entries() {
		up = append(up, e.Key.Node.(*ast.SelectorExpr).Sel.Name)
	}
	names := map[corev1.PersistentVolumeClaimConditionType]string{
		corev1.PersistentVolumeClaimFileSystemResizePending: "PersistentVolumeClaimFileSystemResizePending",
		corev1.PersistentVolumeClaimResizing:                "PersistentVolumeClaimResizing",
		corev1.PersistentVolumeClaimControllerResizeError:   "PersistentVolumeClaimControllerResizeError",
		corev1.PersistentVolumeClaimNodeResizeError:         "PersistentVolumeClaimNodeResizeError",
	}
	var ours []string
	for _, c := range resizeConditions {
		ours = append(ours, names[c])
	}
	slices.Sort(up)
	slices.Sort(ours)
	if !slices.Equal(up, ours) {
		t.Errorf("resize conditions %v, upstream's knownResizeConditions %v", ours, up)
	}
}

// TestRecoverVolumeExpansionFailureLocked: berth expands as upstream with
// RecoverVolumeExpansionFailure on (MarkFSResizeFinished clears the
// resize status), which holds while the gate is locked on.
func TestRecoverVolumeExpansionFailureLocked(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, e := range src.Value("k8s.io/kubernetes/pkg/features", "defaultVersionedKubernetesFeatureGates").Entries() {
		if sel, ok := e.Key.Node.(*ast.Ident); !ok || sel.Name != "RecoverVolumeExpansionFailure" {
			continue
		}
		specs := e.Value.Elems()
		last := specs[len(specs)-1].Fields()
		lock, ok := last["LockToDefault"]
		if id, isID := lock.Node.(*ast.Ident); !ok || !isID || id.Name != "true" {
			t.Errorf("upstream's RecoverVolumeExpansionFailure is no longer locked: berth expands as if it were on")
		}
		if id, isID := last["Default"].Node.(*ast.Ident); !isID || id.Name != "true" {
			t.Errorf("upstream's RecoverVolumeExpansionFailure is no longer on by default")
		}
		return
	}
	t.Error("upstream has no RecoverVolumeExpansionFailure gate: its expansion without it is what berth must do")
}
