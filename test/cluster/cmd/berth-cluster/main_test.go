package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/test/cluster"
)

// TestBerthAcceptsTheNodeConfiguration loads what berth-cluster gives berth
// (the KubeletConfiguration, --kubeconfig, --hostname-override) through
// berth's own configuration loader.
func TestBerthAcceptsTheNodeConfiguration(t *testing.T) {
	dir := t.TempDir()
	staticPods := filepath.Join(dir, "static-pods")
	if err := os.Mkdir(staticPods, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeletConfig := filepath.Join(dir, "kubelet-config.yaml")
	kubeconfig := filepath.Join(dir, "node.kubeconfig")
	ca, err := cluster.NewCA(rand.Reader, time.Now(), "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca.KeyPair().CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeletConfig, kubeletConfigYAML(staticPods, "unix:///run/containerd/containerd.sock", caFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := config.NewFlags()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	flags.AddFlags(fs)
	if err := fs.Parse([]string{"--config=" + kubeletConfig, "--kubeconfig=" + kubeconfig, "--hostname-override=node-a"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(t.Context(), flags, config.OSEnv())
	if err != nil {
		t.Fatalf("berth refuses the node configuration: %v", err)
	}
	if cfg.NodeName != "node-a" || cfg.Kubelet.StaticPodPath != staticPods || cfg.Kubelet.ReadOnlyPort != 10255 || cfg.Kubelet.CgroupDriver != "cgroupfs" {
		t.Errorf("loaded node %q, staticPodPath %q, readOnlyPort %d, cgroupDriver %q", cfg.NodeName, cfg.Kubelet.StaticPodPath, cfg.Kubelet.ReadOnlyPort, cfg.Kubelet.CgroupDriver)
	}
}
