package bench

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/test/cluster"
)

const testCRI = "unix:///run/containerd/containerd.sock"

func decodeKubeletConfig(t *testing.T, lines []string) *kubeletconfigv1beta1.KubeletConfiguration {
	t.Helper()
	var kc kubeletconfigv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict([]byte(strings.Join(lines, "\n")), &kc); err != nil {
		t.Fatalf("decode the configuration: %v\n%s", err, strings.Join(lines, "\n"))
	}
	return &kc
}

// TestKubeletConfigDefaults: the defaults configuration sets what this
// machine needs (its images and iptables kept) and a real node's kubelet
// API, nothing else; maxPods only when it is not upstream's default.
func TestKubeletConfigDefaults(t *testing.T) {
	base := kubeletconfigv1beta1.KubeletConfiguration{
		TypeMeta:                    metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		ContainerRuntimeEndpoint:    testCRI,
		CgroupDriver:                "cgroupfs",
		FailCgroupV1:                ptr.To(false),
		FailSwapOn:                  ptr.To(false),
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		MakeIPTablesUtilChains:      ptr.To(false),
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
			Webhook:   kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			X509:      kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: "/c/pki/ca.crt"},
		},
		Authorization: kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeWebhook},
	}
	tests := []struct {
		name    string
		col     string
		maxPods int
		want    func(kc *kubeletconfigv1beta1.KubeletConfiguration)
	}{
		{name: "berth, maxPods 250", col: ColBerth, maxPods: 250, want: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.MaxPods = 250 }},
		{name: "upstream, maxPods 250: the same", col: ColUpstream, maxPods: 250, want: func(kc *kubeletconfigv1beta1.KubeletConfiguration) { kc.MaxPods = 250 }},
		{name: "maxPods 110 is the default: not written", col: ColBerth, maxPods: 110, want: func(*kubeletconfigv1beta1.KubeletConfiguration) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, err := KubeletConfig(ConfigDefaults, tt.col, NodeConfig{CRIEndpoint: testCRI, ClientCAFile: "/c/pki/ca.crt", MaxPods: tt.maxPods})
			if err != nil {
				t.Fatal(err)
			}
			want := base
			tt.want(&want)
			if diff := cmp.Diff(&want, decodeKubeletConfig(t, lines)); diff != "" {
				t.Errorf("defaults configuration (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeletConfigShared: both kubelets get the shared file with the
// bench's maxPods; the upstream kubelet also skips its swap check.
func TestKubeletConfigShared(t *testing.T) {
	nc := NodeConfig{CRIEndpoint: testCRI, ClientCAFile: "/c/pki/ca.crt", MaxPods: 250}
	for _, tt := range []struct {
		col        string
		failSwapOn *bool
	}{{ColBerth, nil}, {ColUpstream, ptr.To(false)}} {
		t.Run(tt.col, func(t *testing.T) {
			lines, err := KubeletConfig(ConfigShared, tt.col, nc)
			if err != nil {
				t.Fatal(err)
			}
			kc := decodeKubeletConfig(t, lines)
			if kc.MaxPods != 250 || !cmp.Equal(kc.FailSwapOn, tt.failSwapOn) || kc.Authorization.Mode != kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow {
				t.Errorf("shared configuration for %s: maxPods %d, failSwapOn %v, authorization %q", tt.col, kc.MaxPods, kc.FailSwapOn, kc.Authorization.Mode)
			}
		})
	}
	if _, err := KubeletConfig("tuned", ColBerth, nc); err == nil {
		t.Error("KubeletConfig accepts an unknown configuration")
	}
}

// TestKubeletConfigBerthLoads: berth loads every configuration (it refuses
// a field it does not honour).
func TestKubeletConfigBerthLoads(t *testing.T) {
	dir := t.TempDir()
	authority, err := cluster.NewCA(rand.Reader, time.Now(), "bench-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	ca, kubeconfig := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(ca, authority.KeyPair().CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kp := cluster.KeyPair{CertPEM: []byte("CERT"), KeyPEM: []byte("KEY")}
	if err := os.WriteFile(kubeconfig, cluster.Kubeconfig("https://127.0.0.1:6443", authority.KeyPair().CertPEM, "system:node:bench-node", kp), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range Configurations() {
		t.Run(name, func(t *testing.T) {
			lines, err := KubeletConfig(name, ColBerth, NodeConfig{CRIEndpoint: testCRI, ClientCAFile: ca, MaxPods: 250})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			flags := config.NewFlags()
			fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
			flags.AddFlags(fs)
			if err := fs.Parse([]string{"--config", path, "--kubeconfig", kubeconfig, "--hostname-override", "bench-node"}); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(context.Background(), flags, config.OSEnv())
			if err != nil {
				t.Fatalf("berth refuses the %s configuration: %v", name, err)
			}
			if cfg.Kubelet.MaxPods != 250 {
				t.Errorf("maxPods = %d, want 250", cfg.Kubelet.MaxPods)
			}
		})
	}
}
