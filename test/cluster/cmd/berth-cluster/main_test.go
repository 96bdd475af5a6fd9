package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/test/cluster"
)

// TestBerthAcceptsTheNodeConfiguration loads what berth-cluster gives berth
// (the KubeletConfiguration, --kubeconfig or --bootstrap-kubeconfig,
// --hostname-override) through berth's own configuration loader, with and
// without the cluster DNS of --network.
func TestBerthAcceptsTheNodeConfiguration(t *testing.T) {
	for _, bootstrap := range []bool{false, true} {
		for _, dns := range []bool{false, true} {
			name := map[bool]string{false: "node certificate", true: "TLS bootstrap"}[bootstrap] +
				map[bool]string{false: "", true: ", cluster DNS"}[dns]
			t.Run(name, func(t *testing.T) { testNodeConfiguration(t, bootstrap, dns) })
		}
	}
}

func testNodeConfiguration(t *testing.T, bootstrap, dns bool) {
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
	if err := os.WriteFile(kubeletConfig, kubeletConfigYAML(nodeConfig{
		staticPodPath: staticPods, criEndpoint: "unix:///run/containerd/containerd.sock", clientCAFile: caFile,
		rotate: bootstrap, clusterDNS: dns,
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config=" + kubeletConfig, "--kubeconfig=" + kubeconfig, "--hostname-override=node-a"}
	if bootstrap {
		// --kubeconfig is written by berth; the bootstrap one exists.
		boot := filepath.Join(dir, "bootstrap.kubeconfig")
		args = append(args, "--bootstrap-kubeconfig="+boot)
		kubeconfig = boot
	}
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := config.NewFlags()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	flags.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(t.Context(), flags, config.OSEnv())
	if err != nil {
		t.Fatalf("berth refuses the node configuration: %v", err)
	}
	if cfg.Kubelet.RotateCertificates != bootstrap {
		t.Errorf("rotateCertificates %v, want %v", cfg.Kubelet.RotateCertificates, bootstrap)
	}
	if cfg.NodeName != "node-a" || cfg.Kubelet.StaticPodPath != staticPods || cfg.Kubelet.ReadOnlyPort != 10255 || cfg.Kubelet.CgroupDriver != "cgroupfs" {
		t.Errorf("loaded node %q, staticPodPath %q, readOnlyPort %d, cgroupDriver %q", cfg.NodeName, cfg.Kubelet.StaticPodPath, cfg.Kubelet.ReadOnlyPort, cfg.Kubelet.CgroupDriver)
	}
	var wantDNS []string
	wantDomain := ""
	if dns {
		wantDNS, wantDomain = []string{cluster.ClusterDNSIP}, cluster.ClusterDomain
	}
	if diff := cmp.Diff(wantDNS, cfg.Kubelet.ClusterDNS); diff != "" || cfg.Kubelet.ClusterDomain != wantDomain {
		t.Errorf("clusterDNS (-want +got):\n%s; clusterDomain %q, want %q", diff, cfg.Kubelet.ClusterDomain, wantDomain)
	}
	// The shared machine's disk fill must not put the node under
	// DiskPressure: not upstream's 10 and 15 %.
	wantEviction := map[string]string{"memory.available": "100Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%", "imagefs.inodesFree": "1%"}
	if diff := cmp.Diff(wantEviction, cfg.Kubelet.EvictionHard); diff != "" {
		t.Errorf("evictionHard (-want +got):\n%s", diff)
	}
}
