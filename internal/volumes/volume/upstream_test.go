package volume

import (
	"os"
	"path/filepath"
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
		{"k8s.io/kubernetes/pkg/volume/fc", []string{msgFCNoDiskInfo, msgFCNoDisk}},
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

// TestRemovedTypesMatchUpstream pins removedTypes to upstream's tree: no
// volume plugin package for any of them, one for each type berth calls
// its own gap (iscsi, fc, flexVolume) and for gitRepo, whose refusal
// words are upstream's.
func TestRemovedTypesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	volumes := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg", "volume")
	dirs := map[string]string{
		"glusterfs": "glusterfs", "rbd": "rbd", "cephfs": "cephfs", "flocker": "flocker", "quobyte": "quobyte",
		"photonPersistentDisk": "photon_pd", "scaleIO": "scaleio", "storageos": "storageos",
		"iscsi": "iscsi", "fc": "fc", "flexVolume": "flexvolume", "gitRepo": "git_repo",
	}
	for typ, dir := range dirs {
		_, err := os.Stat(filepath.Join(volumes, dir))
		if has := err == nil; has == removedTypes[typ] {
			t.Errorf("type %s: upstream has pkg/volume/%s: %v, but removedTypes says %v", typ, dir, has, removedTypes[typ])
		}
	}
	if len(removedTypes) != 8 {
		t.Errorf("removedTypes has %d types, the table above 8", len(removedTypes))
	}
	var lits []string
	for _, f := range src.Files("k8s.io/kubernetes/pkg/volume/git_repo") {
		lits = append(lits, f.StringLiterals()...)
	}
	const words = "git-repo volume plugin has been disabled"
	if !slices.ContainsFunc(lits, func(l string) bool { return strings.Contains(l, words) }) {
		t.Errorf("upstream's git_repo plugin no longer says %q", words)
	}
	if err := unsupported("gitRepo"); !strings.Contains(err.Error(), words) {
		t.Errorf("gitRepo refusal %q lacks upstream's %q", err, words)
	}
}
