package credprovider

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
)

func osFiles() Files { return Files{ReadFile: os.ReadFile, ReadDir: os.ReadDir, Stat: os.Stat} }

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

const v1Config = `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: ecr
  matchImages: ["*.dkr.ecr.*.amazonaws.com"]
  defaultCacheDuration: 12h
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args: [get-credentials]
  env:
  - name: AWS_PROFILE
    value: node
`

func TestLoadConfig(t *testing.T) {
	ecr := kubeletconfigv1.CredentialProvider{Name: "ecr", MatchImages: []string{"*.dkr.ecr.*.amazonaws.com"},
		DefaultCacheDuration: &metav1.Duration{Duration: 12 * 3600e9}, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
		Args: []string{"get-credentials"}, Env: []kubeletconfigv1.ExecEnvVar{{Name: "AWS_PROFILE", Value: "node"}}}
	gcr := kubeletconfigv1.CredentialProvider{Name: "gcr", MatchImages: []string{"gcr.io"},
		DefaultCacheDuration: &metav1.Duration{}, APIVersion: "credentialprovider.kubelet.k8s.io/v1beta1"}
	gcrYAML := func(version string) string {
		return "apiVersion: kubelet.config.k8s.io/" + version + `
kind: CredentialProviderConfig
providers:
- {name: gcr, matchImages: [gcr.io], defaultCacheDuration: 0s, apiVersion: credentialprovider.kubelet.k8s.io/v1beta1}
`
	}
	tests := []struct {
		name    string
		files   map[string]string // under the config directory; "" is the path itself as a file
		want    []kubeletconfigv1.CredentialProvider
		wantErr string
	}{
		{name: "v1 file", files: map[string]string{"": v1Config}, want: []kubeletconfigv1.CredentialProvider{ecr}},
		{name: "v1beta1 file", files: map[string]string{"": gcrYAML("v1beta1")}, want: []kubeletconfigv1.CredentialProvider{gcr}},
		{name: "v1alpha1 file", files: map[string]string{"": gcrYAML("v1alpha1")}, want: []kubeletconfigv1.CredentialProvider{gcr}},
		{name: "json", files: map[string]string{"": `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"gcr","matchImages":["gcr.io"],"defaultCacheDuration":"0s","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1"}]}`},
			want: []kubeletconfigv1.CredentialProvider{gcr}},
		{name: "directory merged in lexical order", files: map[string]string{"b.yaml": v1Config, "a.json": gcrYAML("v1"), "c.conf": "ignored", "d.yml": "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n"},
			want: []kubeletconfigv1.CredentialProvider{gcr, ecr}},
		{name: "duplicate name across files", files: map[string]string{"a.yaml": v1Config, "b.yaml": v1Config}, wantErr: `duplicate provider name "ecr"`},
		{name: "empty directory", files: map[string]string{"x.conf": ""}, wantErr: "no configuration files found"},
		{name: "unknown field", files: map[string]string{"": v1Config + "  extra: 1\n"}, wantErr: `unknown field "extra"`},
		{name: "tokenAttributes unknown to v1beta1", files: map[string]string{"": gcrYAML("v1beta1") + "  tokenAttributes: {serviceAccountTokenAudience: x}\n"}, wantErr: "tokenAttributes"},
		{name: "wrong kind", files: map[string]string{"": strings.Replace(v1Config, "CredentialProviderConfig", "KubeletConfiguration", 1)}, wantErr: `kind is "KubeletConfiguration"`},
		{name: "wrong version", files: map[string]string{"": strings.Replace(v1Config, "kubelet.config.k8s.io/v1", "kubelet.config.k8s.io/v2", 1)}, wantErr: `apiVersion "kubelet.config.k8s.io/v2" is not supported`},
		{name: "duplicate field", files: map[string]string{"": v1Config + "  defaultCacheDuration: 1h\n"}, wantErr: "defaultCacheDuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cp")
			if _, ok := tt.files[""]; ok {
				writeFile(t, path, tt.files[""], 0o644)
			} else {
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range tt.files {
					writeFile(t, filepath.Join(path, name), content, 0o644)
				}
			}
			cfg, _, err := LoadConfig(osFiles(), path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadConfig() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig(): %v", err)
			}
			if diff := cmp.Diff(tt.want, cfg.Providers); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateConfig(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "ecr"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(bin, "notexec"), "", 0o644)
	if err := os.Mkdir(filepath.Join(bin, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	valid := func() kubeletconfigv1.CredentialProvider {
		return kubeletconfigv1.CredentialProvider{Name: "ecr", MatchImages: []string{"*.example.com"},
			DefaultCacheDuration: &metav1.Duration{}, APIVersion: "credentialprovider.kubelet.k8s.io/v1"}
	}
	with := func(f func(p *kubeletconfigv1.CredentialProvider)) []kubeletconfigv1.CredentialProvider {
		p := valid()
		f(&p)
		return []kubeletconfigv1.CredentialProvider{p}
	}
	tests := []struct {
		name      string
		providers []kubeletconfigv1.CredentialProvider
		binDir    string
		want      []string
	}{
		{name: "valid", providers: with(func(*kubeletconfigv1.CredentialProvider) {})},
		{name: "no providers", want: []string{"providers: Required value: at least 1 item in plugins is required"}},
		{name: "duplicate name", providers: append(with(func(*kubeletconfigv1.CredentialProvider) {}), valid()),
			want: []string{`providers[1].name: Duplicate value: "ecr"`}},
		{name: "slash in name", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "../ecr" }),
			want: []string{`providers[0].name: Invalid value: "../ecr": provider name cannot contain '/'`}},
		{name: "space in name", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "e cr" }),
			want: []string{`providers[0].name: Invalid value: "e cr": provider name cannot contain spaces`}},
		{name: "dot dot", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = ".." }),
			want: []string{`providers[0].name: Invalid value: "..": provider name cannot be '..'`}},
		{name: "no name", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "" }),
			want: []string{"providers[0].name: Required value"}},
		{name: "no apiVersion", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.APIVersion = "" }),
			want: []string{"providers[0].apiVersion: Required value"}},
		{name: "bad apiVersion", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.APIVersion = "credentialprovider.kubelet.k8s.io/v2" }),
			want: []string{`providers[0].apiVersion: Unsupported value: "credentialprovider.kubelet.k8s.io/v2": supported values: "credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1alpha1", "credentialprovider.kubelet.k8s.io/v1beta1"`}},
		{name: "no matchImages", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.MatchImages = nil }),
			want: []string{"providers[0].matchImages: Required value: at least 1 item in matchImages is required"}},
		{name: "bad matchImages", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.MatchImages = []string{"ok.io", "%zz"} }),
			want: []string{`providers[0].matchImages[1]: Invalid value: "%zz": match image is invalid: parse "https://%zz": invalid URL escape "%zz"`}},
		{name: "no defaultCacheDuration", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.DefaultCacheDuration = nil }),
			want: []string{"providers[0].defaultCacheDuration: Required value"}},
		{name: "negative defaultCacheDuration", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.DefaultCacheDuration = &metav1.Duration{Duration: -1} }),
			want: []string{`providers[0].defaultCacheDuration: Invalid value: "-1ns": must be greater than or equal to 0`}},
		{name: "tokenAttributes refused", providers: with(func(p *kubeletconfigv1.CredentialProvider) {
			p.TokenAttributes = &kubeletconfigv1.ServiceAccountTokenAttributes{ServiceAccountTokenAudience: "x"}
		}), want: []string{"providers[0].tokenAttributes: Forbidden: the service account token mode of credential provider plugins is not supported by berth"}},
		{name: "binary missing", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "gcr" }),
			want: []string{`providers[0].name: Invalid value: "gcr": plugin binary executable ` + bin + `/gcr: stat ` + bin + `/gcr: no such file or directory`}},
		{name: "binary not executable", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "notexec" }),
			want: []string{`providers[0].name: Invalid value: "notexec": plugin binary ` + bin + `/notexec is not an executable file`}},
		{name: "binary a directory", providers: with(func(p *kubeletconfigv1.CredentialProvider) { p.Name = "dir" }),
			want: []string{`providers[0].name: Invalid value: "dir": plugin binary ` + bin + `/dir is not an executable file`}},
		{name: "bin dir missing", providers: with(func(*kubeletconfigv1.CredentialProvider) {}), binDir: bin + "/nope",
			want: []string{`imageCredentialProviderBinDir: Invalid value: "` + bin + `/nope": plugin binary directory: stat ` + bin + `/nope: no such file or directory`}},
		{name: "bin dir not given", providers: with(func(*kubeletconfigv1.CredentialProvider) {}), binDir: "-",
			want: []string{"imageCredentialProviderBinDir: Required value: the directory of the credential provider plugins"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binDir := bin
			switch tt.binDir {
			case "":
			case "-":
				binDir = ""
			default:
				binDir = tt.binDir
			}
			var got []string
			for _, e := range ValidateConfig(osFiles(), &kubeletconfigv1.CredentialProviderConfig{Providers: tt.providers}, binDir) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadConfigHash: the hash covers every file, in order, each preceded
// by its length as 8 big-endian bytes, as upstream's.
func TestLoadConfigHash(t *testing.T) {
	dir := t.TempDir()
	a, b := strings.Replace(v1Config, "ecr", "a", 1), strings.Replace(v1Config, "ecr", "b", 1)
	writeFile(t, filepath.Join(dir, "a.yaml"), a, 0o644)
	writeFile(t, filepath.Join(dir, "b.yaml"), b, 0o644)
	h := sha256.New()
	for _, s := range []string{a, b} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	_, got, err := LoadConfig(osFiles(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("sha256:%x", h.Sum(nil)); got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
}
