package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthk8s/berth/test/cluster"
)

// TestCredentialProviderPull pulls a static pod's image from a registry
// with basic auth, with credentials only an image credential provider
// plugin gives: internal/images/credprovider's test plugin, built here, answers
// the registry's user and password for images that its matchImages
// cover.
func TestCredentialProviderPull(t *testing.T) {
	requireE2E(t)
	reg := startRegistry(t)
	root, err := cluster.ResolveBinDir("")
	must(t, err)
	layout := filepath.Join(root, "..", "..", "images", "busybox", "image.tar")
	image := reg.host + "/private/busybox:1.0"
	if err := reg.push(layout, "private/busybox", "1.0"); err != nil {
		t.Fatalf("push %s from %s (run `make node` for hack/images.sh): %v", image, layout, err)
	}
	t.Cleanup(func() { removeImageNames(t, reg.host+"/private/") })

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "registry-login"), "github.com/berthk8s/berth/internal/images/credprovider/testdata/plugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin: %v\n%s", err, out)
	}
	runs := filepath.Join(dir, "runs")
	config := filepath.Join(dir, "credential-providers.yaml")
	must(t, os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: registry-login
  matchImages: [%q]
  defaultCacheDuration: 1m
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args: [ok]
  env:
  - {name: PLUGIN_USER, value: %q}
  - {name: PLUGIN_PASSWORD, value: %q}
  - {name: PLUGIN_LOCATION, value: %q}
  - {name: PLUGIN_CACHE_KEY_TYPE, value: Registry}
  - {name: PLUGIN_LOG, value: %q}
`, reg.host, registryUser, registryPassword, reg.host, runs)), 0o644))

	n := newNode(t)
	n.extraArgs = []string{"--image-credential-provider-config", config, "--image-credential-provider-bin-dir", bin}
	n.start()
	n.writeManifest("private.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: private
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: Always
    command: ["sleep", "3600"]
`, image))
	n.waitPod(fullName("private"), "running with the plugin's credentials", running)
	data, err := os.ReadFile(runs)
	must(t, err)
	if got, want := strings.Fields(string(data)), reg.host+"/private/busybox"; len(got) != 1 || got[0] != want {
		t.Errorf("plugin runs %q, want one for %q", got, want)
	}
	n.removeManifest("private.yaml")
	n.waitNoPod(fullName("private"))
}
