package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

func sharedKubeletConfig(t *testing.T) *kubeletconfigv1beta1.KubeletConfiguration {
	t.Helper()
	var kc kubeletconfigv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict([]byte(strings.Join(sharedConfig("unix:///run/containerd/containerd.sock", 250), "\n")), &kc); err != nil {
		t.Fatalf("decode the shared config: %v", err)
	}
	return &kc
}

// TestSharedConfigEvictionIsUpstreamDefault: the eviction thresholds both
// kubelets run with are upstream's defaults.
func TestSharedConfigEvictionIsUpstreamDefault(t *testing.T) {
	up := upstreamsrc.New(t).Value("k8s.io/kubernetes/pkg/kubelet/eviction", "DefaultEvictionHard").AsStringMap()
	if diff := cmp.Diff(up, sharedKubeletConfig(t).EvictionHard); diff != "" {
		t.Errorf("evictionHard differs from upstream's default (-upstream +bench):\n%s", diff)
	}
}

// TestSharedConfigBerthHonours: berth loads the shared configuration (it
// refuses a field it does not honour), so the guards run in both kubelets.
func TestSharedConfigBerthHonours(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(sharedConfig("unix:///run/containerd/containerd.sock", 250), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := config.NewFlags()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	flags.AddFlags(fs)
	if err := fs.Parse([]string{"--config", path, "--hostname-override", "bench-node"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(context.Background(), flags, config.OSEnv())
	if err != nil {
		t.Fatalf("berth refuses the bench configuration: %v", err)
	}
	kc := cfg.Kubelet
	if !*kc.CgroupsPerQOS || kc.CgroupRoot != "/" || kc.ContainerLogMaxSize != "10Mi" || len(kc.EvictionHard) != 5 {
		t.Errorf("guards not set as the bench asks: cgroupsPerQOS %v, cgroupRoot %q, containerLogMaxSize %q, evictionHard %v",
			*kc.CgroupsPerQOS, kc.CgroupRoot, kc.ContainerLogMaxSize, kc.EvictionHard)
	}
}

// TestLogTail: an exited kubelet's error carries the end of its log.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubelet.log")
	if got := logTail(path, 8); got != "" {
		t.Errorf("logTail(missing) = %q", got)
	}
	if err := os.WriteFile(path, []byte("first line\nE0101 flag refused\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := logTail(path, 13), "; its log ends:\nflag refused"; got != want {
		t.Errorf("logTail = %q; want %q", got, want)
	}
}
