package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const credProviderConfig = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: ecr-credential-provider
  matchImages: ["*.dkr.ecr.*.amazonaws.com"]
  defaultCacheDuration: 12h
  apiVersion: credentialprovider.kubelet.k8s.io/v1
`

// TestCredentialProviderFlags loads the credential provider flags: both
// given and valid, the config is in Config; otherwise each problem names
// the flag it is about.
func TestCredentialProviderFlags(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	writeFile(t, filepath.Join(bin, "ecr-credential-provider"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "ecr-credential-provider"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "cp.yaml"), credProviderConfig)
	writeFile(t, filepath.Join(dir, "other.yaml"), strings.Replace(credProviderConfig, "ecr-credential-provider", "gcr", 1))
	writeFile(t, filepath.Join(dir, "token.yaml"), credProviderConfig+"  tokenAttributes: {serviceAccountTokenAudience: a, cacheType: Token, requireServiceAccount: true}\n")
	cfgFlag := "--image-credential-provider-config="
	binFlag := "--image-credential-provider-bin-dir="
	tests := []struct {
		name     string
		args     []string
		wantErrs []string
		wantName string
	}{
		{name: "neither"},
		{name: "both", args: []string{cfgFlag + dir + "/cp.yaml", binFlag + bin}, wantName: "ecr-credential-provider"},
		{name: "config without bin dir", args: []string{cfgFlag + dir + "/cp.yaml"},
			wantErrs: []string{"flag --image-credential-provider-bin-dir: must be given with --image-credential-provider-config"}},
		{name: "bin dir without config", args: []string{binFlag + bin},
			wantErrs: []string{"flag --image-credential-provider-config: must be given with --image-credential-provider-bin-dir"}},
		{name: "config missing", args: []string{cfgFlag + dir + "/nope.yaml", binFlag + bin},
			wantErrs: []string{`flag --image-credential-provider-config: read credential provider config "` + dir + `/nope.yaml": stat ` + dir + `/nope.yaml: no such file or directory`}},
		{name: "bin dir missing", args: []string{cfgFlag + dir + "/cp.yaml", binFlag + dir + "/nobin"},
			wantErrs: []string{`flag --image-credential-provider-bin-dir: Invalid value: "` + dir + `/nobin": plugin binary directory: stat ` + dir + `/nobin: no such file or directory`}},
		{name: "plugin binary missing", args: []string{cfgFlag + dir + "/other.yaml", binFlag + bin},
			wantErrs: []string{`flag --image-credential-provider-config: "` + dir + `/other.yaml": providers[0].name: Invalid value: "gcr": plugin binary executable ` + bin + `/gcr: stat ` + bin + `/gcr: no such file or directory`}},
		{name: "service account token mode refused", args: []string{cfgFlag + dir + "/token.yaml", binFlag + bin},
			wantErrs: []string{`flag --image-credential-provider-config: "` + dir + `/token.yaml": providers[0].tokenAttributes: Forbidden: the service account token mode of credential provider plugins is not supported by berth`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, tt.args), testEnv("node-a"))
			if len(tt.wantErrs) > 0 {
				if err == nil {
					t.Fatal("Load succeeded")
				}
				for _, want := range tt.wantErrs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not contain %q:\n%v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if cfg.CredentialProviders != nil {
				got = cfg.CredentialProviders.Providers[0].Name
			}
			if diff := cmp.Diff(tt.wantName, got); diff != "" {
				t.Errorf("provider (-want +got):\n%s", diff)
			}
		})
	}
}
