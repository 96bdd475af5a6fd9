package volume

import (
	"slices"
	"strings"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestClaimAndTrustBundleWordsMatchUpstream pins the messages and values
// berth copies from upstream's kubelet to the literals of the upstream
// packages that say them (berth wraps with %w where upstream formats with
// %v).
func TestClaimAndTrustBundleWordsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tc := range []struct {
		pkg  string
		msgs []string
	}{
		{"k8s.io/kubernetes/pkg/kubelet/volumemanager/populator", []string{
			msgProcessingPVC, msgPVCDeleted, msgPVCNotBound, msgPVCNoVolume, msgFetchPVC, msgFetchPV,
			msgPVNotBound, msgPVOtherClaim, msgModeInMounts, msgModeInDevices,
		}},
		{"k8s.io/kubernetes/pkg/kubelet/clustertrustbundle", []string{
			msgCTBStatic, msgCTBGet, msgCTBSelector, msgCTBSelectorLen, msgCTBList, msgCTBNoMatch,
		}},
		{"k8s.io/kubernetes/pkg/volume/projected", []string{msgCTBNeither}},
		{"k8s.io/kubernetes/pkg/volume/util", []string{pvcProtectionFinalizer}},
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
	if up := src.Value("k8s.io/kubernetes/pkg/kubelet/clustertrustbundle", "maxLabelSelectorLength").AsInt(); up != maxLabelSelectorLength {
		t.Errorf("maxLabelSelectorLength %d, upstream %d", maxLabelSelectorLength, up)
	}
}
