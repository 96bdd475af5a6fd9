package kuberuntime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/images/credprovider"
)

// testCredentialProviders builds credprovider's test plugin and returns
// Providers running it for 127.0.0.1:5000 images: it answers user
// "plugin" and password "pw-<repository>", and logs each run to the file
// runsLog returns.
func testCredentialProviders(t *testing.T) (*credprovider.Providers, string) {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "test-plugin"), "github.com/berthk8s/berth/internal/images/credprovider/testdata/plugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin: %v\n%s", err, out)
	}
	runs := filepath.Join(t.TempDir(), "runs")
	ps, err := credprovider.New(credprovider.Config{
		Providers: &kubeletconfigv1.CredentialProviderConfig{Providers: []kubeletconfigv1.CredentialProvider{{
			Name: "test-plugin", MatchImages: []string{"127.0.0.1:5000"}, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
			DefaultCacheDuration: &metav1.Duration{Duration: time.Hour}, Args: []string{"ok"},
			Env: []kubeletconfigv1.ExecEnvVar{{Name: "PLUGIN_USER", Value: "plugin"}, {Name: "PLUGIN_LOG", Value: runs}},
		}}},
		BinDir: bin,
		Clock:  testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return ps, runs
}

// TestSyncPodCredentialProvider pulls through SyncPod with a credential
// provider plugin: its credentials reach the CRI's PullImage for an image
// it matches, after the pod's pull secrets' (upstream's order), and it is
// not asked about an image it does not match.
func TestSyncPodCredentialProvider(t *testing.T) {
	const private = "127.0.0.1:5000/private/busybox:1.0"
	const public = "docker.io/library/busybox:1.36"
	pluginCreds := "plugin:pw-127.0.0.1:5000/private/busybox"
	providers, runs := testCredentialProviders(t)
	e := newEnv(t, func(c *Config) { c.CredentialProviders = providers })
	e.fake.AllowPull(private)
	e.fake.AllowPull(public)
	images := &authImages{ImageServiceClient: e.m.cfg.Images, want: map[string]string{private: pluginCreds}}
	e.m.cfg.Images = images
	e.m.cfg.PullSecrets = func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
		return dockerConfigJSONSecret(name, `{"127.0.0.1:5000":{"username":"secret","password":"wrong"}}`), nil
	}

	pod := basePod()
	pod.Spec.Containers[0].Image = private
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("private image: failures %v", f)
	}
	e.running(pod, "app")

	other := basePod()
	other.Name, other.UID = "public", "uid-public"
	other.Spec.Containers[0].Image = public
	if f := e.sync(other); len(f) != 0 {
		t.Fatalf("public image: failures %v", f)
	}

	want := []string{private + " secret:wrong", private + " " + pluginCreds, public + " anonymous"}
	if diff := cmp.Diff(want, images.attempts()); diff != "" {
		t.Errorf("pull attempts (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"127.0.0.1:5000/private/busybox"}, strings.Fields(string(data))); diff != "" {
		t.Errorf("plugin runs (-want +got):\n%s", diff)
	}
}
