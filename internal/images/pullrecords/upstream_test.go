package pullrecords

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const upstreamPkg = "k8s.io/kubernetes/pkg/kubelet/images/pullmanager"

// TestResultsMatchUpstream pins the result label values to upstream's
// mustAttemptImagePullResult constants.
func TestResultsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for name, ours := range map[string]string{
		"checkResultCredentialPolicyAllowed": ResultPolicyAllowed,
		"checkResultCredentialRecordFound":   ResultRecordFound,
		"checkResultMustAuthenticate":        ResultMustAuth,
		"checkResultError":                   ResultError,
	} {
		if got := src.Value(upstreamPkg, name).AsString(); got != ours {
			t.Errorf("%s = %q upstream, berth has %q", name, got, ours)
		}
	}
	if got := src.Value(upstreamPkg, "writeRecordWhileMatchingLimit").AsInt(); got != writeWhileMatchingLimit {
		t.Errorf("writeRecordWhileMatchingLimit = %d upstream, berth has %d", got, writeWhileMatchingLimit)
	}
}

// TestReadsUpstreamRecords reads upstream's own record files (its
// testdata, written by the kubelet's encoder in both API versions): every
// well-formed one decodes, the broken one is reported, and each intent's
// file is named as berth names it.
func TestReadsUpstreamRecords(t *testing.T) {
	src := upstreamsrc.New(t)
	testdata := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/images/pullmanager/testdata")
	root := t.TempDir()
	s, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"pulling", "pulled"} {
		entries, err := os.ReadDir(filepath.Join(testdata, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			raw, err := os.ReadFile(filepath.Join(testdata, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "image_manager", sub, e.Name()), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	images, old, err := s.Intents()
	if err != nil {
		t.Errorf("Intents: %v", err)
	}
	if len(images) != 7 {
		t.Errorf("read %d intents, want upstream's 7", len(images))
	}
	var alpha int
	for i, image := range images {
		if _, err := os.Stat(filepath.Join(testdata, "pulling", fileName(image))); err != nil {
			t.Errorf("intent %q: upstream's file is not named %s: %v", image, fileName(image), err)
		}
		if old[i] {
			alpha++
		}
	}
	if alpha != 2 {
		t.Errorf("%d v1alpha1 intents, want 2", alpha)
	}
	recs, _, err := s.Records()
	if err == nil {
		t.Error("Records: no error for upstream's broken record")
	}
	if len(recs) != 8 {
		t.Errorf("read %d records, want 8 of upstream's 9 (one is broken)", len(recs))
	}
	for _, r := range recs {
		if _, err := os.Stat(filepath.Join(testdata, "pulled", fileName(r.ImageRef))); err != nil {
			t.Errorf("record %q: upstream's file is not named %s: %v", r.ImageRef, fileName(r.ImageRef), err)
		}
		if r.ImageRef == "testimageref" {
			got := r.CredentialMapping["docker.io/testing/test"].KubernetesSecrets
			if len(got) != 1 || got[0].CredentialHash != "testsecrethash" || got[0].Namespace != "default" {
				t.Errorf("testimageref record secrets = %+v", got)
			}
		}
	}
}
