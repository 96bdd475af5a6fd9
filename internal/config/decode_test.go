package config

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name, target, patch, want string
	}{
		{"replace scalar", `{"a":1,"b":2}`, `{"a":3}`, `{"a":3,"b":2}`},
		{"add key", `{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`},
		{"null deletes", `{"a":1,"b":2}`, `{"a":null}`, `{"b":2}`},
		{"objects merge", `{"m":{"x":1,"y":2}}`, `{"m":{"y":3,"z":4}}`, `{"m":{"x":1,"y":3,"z":4}}`},
		{"nested null", `{"m":{"x":1,"y":2}}`, `{"m":{"x":null}}`, `{"m":{"y":2}}`},
		{"lists replace", `{"l":[1,2]}`, `{"l":[3]}`, `{"l":[3]}`},
		{"object over scalar", `{"a":1}`, `{"a":{"b":null,"c":2}}`, `{"a":{"c":2}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var target, patch, want any
			for i, s := range []string{tc.target, tc.patch, tc.want} {
				if err := json.Unmarshal([]byte(s), []*any{&target, &patch, &want}[i]); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, mergePatch(target, patch)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			var again any
			_ = json.Unmarshal([]byte(tc.target), &again)
			if diff := cmp.Diff(again, target); diff != "" {
				t.Errorf("mergePatch modified its target:\n%s", diff)
			}
		})
	}
}

func mapFSEnv(fsys fstest.MapFS) Env {
	trim := func(name string) string { return strings.TrimPrefix(name, "/") }
	return Env{
		ReadFile: func(name string) ([]byte, error) { return fs.ReadFile(fsys, trim(name)) },
		ReadDir:  func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(fsys, trim(name)) },
		Hostname: func() (string, error) { return "h", nil },
	}
}

func TestDropInFilesOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"d/20.conf":      {},
		"d/10.conf":      {},
		"d/15/99.conf":   {},
		"d/15/01.conf":   {},
		"d/30.yaml":      {},
		"d/05.conf.bak":  {},
		"d/a.conf/x.txt": {},
	}
	got, err := dropInFiles(mapFSEnv(fsys), "/d")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/d/10.conf", "/d/15/01.conf", "/d/15/99.conf", "/d/20.conf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadWithInjectedFS(t *testing.T) {
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	fsys := fstest.MapFS{
		"etc/berth/config.yaml": {Data: []byte(header + "staticPodPath: manifests\nresolvConf: ''\n" +
			"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\n")},
		"etc/berth/conf.d/10.conf":      {Data: []byte(header + "nodeStatusUpdateFrequency: 20s\n")},
		"etc/berth/conf.d/20.conf":      {Data: []byte(header + "nodeStatusUpdateFrequency: 10s\nstaticPodURL: http://pods.invalid/\n")},
		"etc/berth/conf.d/sub/tls.conf": {Data: []byte(header + "syncFrequency: 90s\n")},
	}
	flags := &Flags{ConfigFile: "/etc/berth/config.yaml", ConfigDir: "/etc/berth/conf.d",
		RootDir: DefaultRootDir, CertDir: DefaultCertDir, PodInfraContainerImage: DefaultPodInfraContainerImage}
	cfg, err := Load(context.Background(), flags, mapFSEnv(fsys))
	if err != nil {
		t.Fatal(err)
	}
	want := &kubeletconfigv1beta1.KubeletConfiguration{
		StaticPodPath:  "/etc/berth/manifests", // relative to the config file
		ResolverConfig: new(string),            // "" stays "": it disables host DNS
		StaticPodURL:   "http://pods.invalid/",
	}
	want.SyncFrequency.Duration = 90e9
	want.Authentication.Webhook.Enabled = new(false)
	want.Authorization.Mode = kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow
	// The base is defaulted before the drop-ins are merged, as upstream:
	// nodeStatusReportFrequency is not derived from a drop-in's update
	// frequency, and the last drop-in restores the default update frequency.
	SetDefaults(want)
	if diff := cmp.Diff(want, &cfg.Kubelet); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if cfg.NodeName != "h" {
		t.Errorf("NodeName = %q, want h", cfg.NodeName)
	}
}

// An explicitly empty value in the base file must survive the drop-in merge:
// it is a non-default value, and berth must not replace it with the default
// (an explicit "evictionHard: {}" turns hard eviction off, an empty
// enforceNodeAllocatable enforces nothing).
func TestExplicitEmptyValueSurvivesDropIns(t *testing.T) {
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
		"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\n"
	fsys := fstest.MapFS{
		"c.yaml":   {Data: []byte(header + "evictionHard: {}\nenforceNodeAllocatable: []\n")},
		"d/1.conf": {Data: []byte(header + "maxPods: 10\n")},
	}
	for _, dir := range []string{"", "/d"} {
		flags := &Flags{ConfigFile: "/c.yaml", ConfigDir: dir, RootDir: "/r", CertDir: "/c", PodInfraContainerImage: "p"}
		cfg, err := Load(context.Background(), flags, mapFSEnv(fsys))
		if err != nil {
			t.Fatalf("config dir %q: %v", dir, err)
		}
		if got := cfg.Kubelet.EvictionHard; got == nil || len(got) != 0 {
			t.Errorf("config dir %q: evictionHard = %v, want the explicit empty map", dir, got)
		}
		if got := cfg.Kubelet.EnforceNodeAllocatable; got == nil || len(got) != 0 {
			t.Errorf("config dir %q: enforceNodeAllocatable = %v, want the explicit empty list", dir, got)
		}
	}
}
