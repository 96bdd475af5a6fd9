package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFlagPrecedence: a flag given on the command line wins over the
// drop-ins, which win over the file, for flags of every shape: a scalar, a
// nested field, a list, a map, and the logging verbosity.
func TestFlagPrecedence(t *testing.T) {
	dir := t.TempDir()
	const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	file := header + "authentication: {webhook: {enabled: false}, anonymous: {enabled: true}}\nauthorization: {mode: AlwaysAllow}\n" +
		"maxPods: 50\nclusterDNS: [10.0.0.1]\nsystemReserved: {cpu: 100m}\nlogging: {verbosity: 1}\nsyncFrequency: 1m\n"
	dropIn := header + "maxPods: 60\nclusterDNS: [10.0.0.2]\nsystemReserved: {memory: 1Gi}\nlogging: {verbosity: 2}\nauthentication: {anonymous: {enabled: false}}\n"
	writeFile(t, filepath.Join(dir, "config.yaml"), file)
	writeFile(t, filepath.Join(dir, "conf.d", "10.conf"), dropIn)
	type result struct {
		MaxPods        int32
		ClusterDNS     []string
		SystemReserved map[string]string
		Verbosity      int
		Anonymous      bool
		SyncFrequency  string
	}
	tests := []struct {
		name string
		args []string
		want result
	}{
		{"file only", []string{"--config=" + dir + "/config.yaml"},
			result{50, []string{"10.0.0.1"}, map[string]string{"cpu": "100m"}, 1, true, "1m0s"}},
		{"drop-in over file", []string{"--config=" + dir + "/config.yaml", "--config-dir=" + dir + "/conf.d"},
			result{60, []string{"10.0.0.2"}, map[string]string{"cpu": "100m", "memory": "1Gi"}, 2, false, "1m0s"}},
		{"flags over drop-in and file", []string{
			"--config=" + dir + "/config.yaml", "--config-dir=" + dir + "/conf.d",
			"--max-pods=70", "--cluster-dns=10.0.0.3,10.0.0.4", "--system-reserved=pid=100", "-v=3", "--anonymous-auth=true",
		}, result{70, []string{"10.0.0.3", "10.0.0.4"}, map[string]string{"pid": "100"}, 3, true, "1m0s"}},
		{"flags over file, no drop-ins", []string{"--config=" + dir + "/config.yaml", "--max-pods=80", "--sync-frequency=2m", "--anonymous-auth=false"},
			result{80, []string{"10.0.0.1"}, map[string]string{"cpu": "100m"}, 1, false, "2m0s"}},
		{"flags without a file", []string{"--max-pods=90", "--authentication-token-webhook=false"},
			result{90, nil, nil, 0, true, "1m0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(context.Background(), parseFlags(t, tc.args), testEnv("node-a"))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			kc := cfg.Kubelet
			got := result{kc.MaxPods, kc.ClusterDNS, kc.SystemReserved, cfg.Verbosity, *kc.Authentication.Anonymous.Enabled, kc.SyncFrequency.Duration.String()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFlagRejectionNamesFlag: a flag that sets a field to a value berth
// refuses is refused as the field would be, naming the flag; a refused
// value from the file names the field and the file.
func TestFlagRejectionNamesFlag(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "c.yaml"), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"authentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\nreservedMemory: [{numaNode: 0, limits: {memory: \"0\"}}]\n")
	_, err := Load(context.Background(), parseFlags(t, []string{"--config=" + dir + "/c.yaml", "--memory-manager-policy=BestEffort"}), testEnv("node-a"))
	if err == nil {
		t.Fatal("Load succeeded")
	}
	for _, want := range []string{
		`flag --memory-manager-policy sets kubeletConfiguration field "memoryManagerPolicy": policy "BestEffort" is not available for platform "linux"`,
		"\n  - kubeletConfiguration field \"reservedMemory\" (set in --config \"" + dir + "/c.yaml\"): invalid configuration: reserved memory may not be zero for NUMA node 0 and resource \"memory\"",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
