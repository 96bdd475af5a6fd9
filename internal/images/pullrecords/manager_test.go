package pullrecords

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	privImage = "registry.example/team/app:v1"
	privRef   = "sha256:1111"
)

var (
	secretA  = Secret{UID: "uid-a", Namespace: "team", Name: "pull", CredentialHash: "hash-a"}
	secretB  = Secret{UID: "uid-b", Namespace: "other", Name: "pull", CredentialHash: "hash-b"}
	sameAsA  = Secret{UID: "uid-c", Namespace: "other", Name: "copy", CredentialHash: "hash-a"}
	rotatedA = Secret{UID: "uid-a", Namespace: "team", Name: "pull", CredentialHash: "hash-a2"}
)

type harness struct {
	t       *testing.T
	root    string
	clock   *clocktesting.FakeClock
	checked []string
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, root: t.TempDir(), clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))}
}

func (h *harness) manager(policy kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy, images ...*runtimeapi.Image) *Manager {
	h.t.Helper()
	s, err := OpenStore(h.root)
	if err != nil {
		h.t.Fatal(err)
	}
	p, err := NewPolicy(policy, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	m, err := New(context.Background(), Config{Store: s, Policy: p, Clock: h.clock, Images: images,
		Checked: func(r string) { h.checked = append(h.checked, r) }})
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

func secrets(s ...Secret) func() ([]Secret, error) {
	return func() ([]Secret, error) { return s, nil }
}

func (h *harness) mustPull(m *Manager, image, ref string, pod func() ([]Secret, error)) bool {
	h.t.Helper()
	must, err := m.MustPull(context.Background(), image, ref, pod)
	if err != nil {
		h.t.Fatal(err)
	}
	return must
}

func pull(t *testing.T, m *Manager, image, ref string, used *Secret) {
	t.Helper()
	if err := m.StartPull(image); err != nil {
		t.Fatal(err)
	}
	m.Pulled(context.Background(), image, ref, used)
}

// TestOtherNamespaceCannotReuseAPrivateImage is the reason for the
// feature: an image pulled with team's secret is not handed to a pod of
// another namespace that has no access, but is to pods that present the
// same secret, or one with the same credentials.
func TestOtherNamespaceCannotReuseAPrivateImage(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	pull(t, m, privImage, privRef, &secretA)

	tests := []struct {
		name string
		pod  func() ([]Secret, error)
		want bool
	}{
		{"no secrets", secrets(), true},
		{"another secret", secrets(secretB), true},
		{"the same secret", secrets(secretA), false},
		{"another secret with the same credentials", secrets(secretB, sameAsA), false},
		{"the same secret with new credentials", secrets(rotatedA), false},
	}
	for _, tc := range tests {
		if got := h.mustPull(m, privImage, privRef, tc.pod); got != tc.want {
			t.Errorf("%s: MustPull = %t, want %t", tc.name, got, tc.want)
		}
	}
	// Another tag of the same repository resolving to the same image is
	// covered by the same record entry.
	if h.mustPull(m, "registry.example/team/app:latest", privRef, secrets(rotatedA)) {
		t.Error("same repository, other tag: MustPull = true")
	}
	// Matches learned by hash or by coordinates were recorded.
	rec := m.records[privRef].CredentialMapping["registry.example/team/app"]
	if len(rec.KubernetesSecrets) != 2 || rec.KubernetesSecrets[0] != sameAsA || rec.KubernetesSecrets[1] != rotatedA {
		t.Errorf("recorded secrets = %+v, want the copy and the rotated secret", rec.KubernetesSecrets)
	}
}

func TestAnonymousPullIsForEveryPod(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.AlwaysVerify)
	pull(t, m, "busybox:1.36", "sha256:2222", nil)
	if h.mustPull(m, "busybox:1.36", "sha256:2222", secrets()) {
		t.Error("anonymously pulled image: MustPull = true")
	}
	// A later pull with a secret does not narrow node-wide access.
	pull(t, m, "busybox:1.36", "sha256:2222", &secretA)
	if h.mustPull(m, "busybox:1.36", "sha256:2222", secrets()) {
		t.Error("after a pull with a secret: MustPull = true")
	}
	// A preloaded image under AlwaysVerify has no record: pull.
	if !h.mustPull(m, "preloaded:1", "sha256:3333", secrets(secretA)) {
		t.Error("preloaded image under AlwaysVerify: MustPull = false")
	}
}

func TestPreloadedImagesAreNotVerified(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	if h.mustPull(m, "preloaded:1", "sha256:3333", func() ([]Secret, error) { return nil, errors.New("must not be asked") }) {
		t.Error("preloaded image: MustPull = true")
	}
	if len(h.checked) != 1 || h.checked[0] != ResultPolicyAllowed {
		t.Errorf("checked = %v, want [%s]", h.checked, ResultPolicyAllowed)
	}
	// While a pull of the image is in flight, it counts as berth's.
	if err := m.StartPull("preloaded:1"); err != nil {
		t.Fatal(err)
	}
	if !h.mustPull(m, "preloaded:1", "sha256:3333", secrets()) {
		t.Error("image being pulled: MustPull = false")
	}
	m.PullFailed(context.Background(), "preloaded:1")
	if h.mustPull(m, "preloaded:1", "sha256:3333", secrets()) {
		t.Error("after the pull failed: MustPull = true")
	}
}

func TestPodSecretsErrorForcesAPull(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	pull(t, m, privImage, privRef, &secretA)
	must, err := m.MustPull(context.Background(), privImage, privRef, func() ([]Secret, error) { return nil, errors.New("secret unreadable") })
	if !must || err == nil {
		t.Errorf("MustPull = %t, %v; want true and the error", must, err)
	}
}

// TestRecordsSurviveARestart: records are read back; an intent whose pull
// finished while berth was down becomes a record without credentials, so
// every pod must prove access; one whose image is absent still marks the
// image as berth's until a pull of it ends.
func TestRecordsSurviveARestart(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	pull(t, m, privImage, privRef, &secretA)
	if err := m.StartPull("registry.example/team/done:v1"); err != nil {
		t.Fatal(err)
	}
	if err := m.StartPull("registry.example/team/gone:v1"); err != nil {
		t.Fatal(err)
	}

	m = h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages,
		&runtimeapi.Image{Id: "sha256:4444", RepoTags: []string{"registry.example/team/done:v1"}})
	if !h.mustPull(m, privImage, privRef, secrets(secretB)) || h.mustPull(m, privImage, privRef, secrets(secretA)) {
		t.Error("the record of the pull with a secret was not read back")
	}
	if !h.mustPull(m, "registry.example/team/done:v1", "sha256:4444", secrets(secretA)) {
		t.Error("an image pulled while berth was down: MustPull = false")
	}
	if _, err := os.Stat(filepath.Join(h.root, "image_manager/pulling", fileName("registry.example/team/done:v1"))); !os.IsNotExist(err) {
		t.Errorf("the completed intent's file is still there: %v", err)
	}
	if !h.mustPull(m, "registry.example/team/gone:v1", "sha256:5555", secrets()) {
		t.Error("an image with a stale intent: MustPull = false")
	}
	pull(t, m, "registry.example/team/gone:v1", "sha256:5555", nil)
	if _, err := os.Stat(filepath.Join(h.root, "image_manager/pulling", fileName("registry.example/team/gone:v1"))); !os.IsNotExist(err) {
		t.Errorf("the stale intent's file outlived a pull of its image: %v", err)
	}
}

func TestPrune(t *testing.T) {
	h := newHarness(t)
	m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
	pull(t, m, privImage, privRef, &secretA)
	pull(t, m, "kept:1", "sha256:kept", nil)
	until := h.clock.Now().Add(time.Second)
	h.clock.Step(2 * time.Second)
	pull(t, m, "new:1", "sha256:new", nil)
	m.Prune(context.Background(), []string{"sha256:kept"}, until)
	if _, ok := m.records[privRef]; ok {
		t.Error("the record of a removed image survived")
	}
	for _, ref := range []string{"sha256:kept", "sha256:new"} {
		if _, ok := m.records[ref]; !ok {
			t.Errorf("record %s was pruned", ref)
		}
	}
	if _, err := os.Stat(filepath.Join(h.root, "image_manager/pulled", fileName(privRef))); !os.IsNotExist(err) {
		t.Errorf("the pruned record's file is still there: %v", err)
	}
}

func TestMergeSecretsSorted(t *testing.T) {
	rec := &kubeletconfigv1beta1.ImagePulledRecord{ImageRef: "r"}
	rec, _ = merge(rec, "app", kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: []Secret{secretA}})
	out, changed := merge(rec, "app", kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: []Secret{secretB}})
	got := out.CredentialMapping["app"].KubernetesSecrets
	if !changed || len(got) != 2 || got[0] != secretB || got[1] != secretA {
		t.Errorf("merge = %+v, %t; want other/pull before team/pull", got, changed)
	}
	if len(rec.CredentialMapping["app"].KubernetesSecrets) != 1 {
		t.Error("merge modified its input")
	}
	if _, changed := merge(out, "app", kubeletconfigv1beta1.ImagePullCredentials{KubernetesSecrets: []Secret{secretA}}); changed {
		t.Error("merging a known secret changed the record")
	}
}

// TestOtherSpellingIsTheSameImage: intents and credential mappings are
// kept by the normalised name, so a private image cannot be run as a
// preloaded one under another spelling (SECURITY.md, issue 26, finding
// 3): not after berth restarted between the pull and its record (the
// runtime lists the image by containerd's name), not while the record
// could not be written, and a record upstream wrote under the pod's
// spelling still matches the pod's secret under another.
func TestOtherSpellingIsTheSameImage(t *testing.T) {
	const short, full, ref = "private/app:v1", "docker.io/private/app:v1", "sha256:7777"
	t.Run("restart between pull and record", func(t *testing.T) {
		h := newHarness(t)
		m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
		if err := m.StartPull(short); err != nil {
			t.Fatal(err)
		}
		m = h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages, &runtimeapi.Image{Id: ref, RepoTags: []string{full}})
		for _, image := range []string{short, full, "index.docker.io/private/app:v1"} {
			if !h.mustPull(m, image, ref, secrets()) {
				t.Errorf("%s: MustPull = false; the pull berth was making became a preloaded image", image)
			}
		}
		if _, ok := m.records[ref]; !ok {
			t.Error("the completed intent did not become a record")
		}
	})
	t.Run("intent left, image not listed", func(t *testing.T) {
		h := newHarness(t)
		m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
		if err := m.StartPull(short); err != nil {
			t.Fatal(err)
		}
		m = h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
		if !h.mustPull(m, full, ref, secrets()) {
			t.Error("a stale intent protected only the spelling it was written under")
		}
		pull(t, m, full, ref, nil)
		if names, _, err := m.cfg.Store.Intents(); err != nil || len(names) != 0 {
			t.Errorf("intents left after a pull under the other spelling: %v, %v", names, err)
		}
	})
	t.Run("record not written", func(t *testing.T) {
		h := newHarness(t)
		m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
		if err := m.StartPull(short); err != nil {
			t.Fatal(err)
		}
		// A directory that is not there fails the write (root ignores modes).
		m.cfg.Store.pulled = filepath.Join(h.root, "image_manager/pulled/missing")
		m.Pulled(context.Background(), short, ref, &secretA)
		if !h.mustPull(m, full, ref, secrets()) {
			t.Error("with its record unwritten, the image was preloaded under another spelling")
		}
	})
	t.Run("upstream's record under the pod's spelling", func(t *testing.T) {
		h := newHarness(t)
		s, err := OpenStore(h.root)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteRecord(&kubeletconfigv1beta1.ImagePulledRecord{ImageRef: ref, CredentialMapping: map[string]kubeletconfigv1beta1.ImagePullCredentials{
			"private/app": {KubernetesSecrets: []Secret{secretA}}, "docker.io/private/app": {KubernetesSecrets: []Secret{secretB}},
		}}); err != nil {
			t.Fatal(err)
		}
		m := h.manager(kubeletconfigv1beta1.NeverVerifyPreloadedImages)
		for _, sec := range []Secret{secretA, secretB} {
			if h.mustPull(m, full, ref, secrets(sec)) || h.mustPull(m, short, ref, secrets(sec)) {
				t.Errorf("secret %s/%s of the record: MustPull = true", sec.Namespace, sec.Name)
			}
		}
		if !h.mustPull(m, full, ref, secrets()) {
			t.Error("no secret: MustPull = false")
		}
	})
}
