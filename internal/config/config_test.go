package config

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files and docs/config-compat.md")

// parseFlags parses args the way cmd/berth does.
func parseFlags(t *testing.T, args []string) *Flags {
	t.Helper()
	f := NewFlags()
	fs := pflag.NewFlagSet("berth", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // deprecation notices
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %q: %v", args, err)
	}
	return f
}

func testEnv(hostname string) Env {
	env := OSEnv()
	env.Hostname = func() (string, error) {
		if hostname == "" {
			return "", errors.New("no hostname in this test")
		}
		return hostname, nil
	}
	return env
}

// checkGolden compares got with testdata/golden/name.golden, or rewrites it
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got), run with -update if intended:\n%s", path, diff)
	}
}

func TestLoadGolden(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		hostname string
	}{
		{name: "defaults", args: nil},
		{name: "minimal", args: []string{"--config=testdata/minimal.yaml"}},
		{name: "standalone-webhook", args: []string{"--config=testdata/standalone-webhook.yaml"}},
		{name: "honoured", args: []string{"--config", "testdata/honoured.yaml"}},
		{name: "json", args: []string{"--config=testdata/config.json"}},
		{name: "unknown-field", args: []string{"--config=testdata/unknown-field.yaml"}},
		{name: "duplicate-field-yaml", args: []string{"--config=testdata/duplicate-field.yaml"}},
		{name: "duplicate-field-json", args: []string{"--config=testdata/duplicate-field.json"}},
		{name: "wrong-kind", args: []string{"--config=testdata/wrong-kind.yaml"}},
		{name: "wrong-apiversion", args: []string{"--config=testdata/wrong-apiversion.yaml"}},
		{name: "missing-kind", args: []string{"--config=testdata/missing-kind.yaml"}},
		{name: "empty-file", args: []string{"--config=testdata/empty.yaml"}},
		{name: "wrong-type", args: []string{"--config=testdata/wrong-type.yaml"}},
		{name: "missing-file", args: []string{"--config=testdata/does-not-exist.yaml"}},
		{name: "unsupported", args: []string{"--config=testdata/unsupported.yaml"}},
		{name: "invalid", args: []string{"--config=testdata/invalid.yaml"}},
		{name: "config-dir", args: []string{"--config=testdata/dropin/base.yaml", "--config-dir=testdata/dropin/conf.d"}},
		{name: "config-dir-only", args: []string{"--config-dir=testdata/dropin/conf.d"}},
		{name: "config-dir-bad", args: []string{"--config=testdata/minimal.yaml", "--config-dir=testdata/dropin-bad"}},
		{name: "config-dir-missing", args: []string{"--config-dir=testdata/no-such-dir"}},
		{name: "flags-over-file", args: []string{
			"--config=testdata/flags-base.yaml",
			"--container-runtime-endpoint=unix:///from/flag.sock",
			"--image-service-endpoint=",
			"--pod-manifest-path=/from/flag",
			"-v", "5",
		}},
		{name: "flags-over-drop-in", args: []string{
			"--config=testdata/dropin/base.yaml", "--config-dir=testdata/dropin/conf.d",
			"--pod-manifest-path=/from/flag", "--v=1",
		}},
		{name: "flags-file-wins-when-flag-not-given", args: []string{"--config=testdata/flags-base.yaml"}},
		{name: "node-flags", hostname: "ignored", args: []string{
			"--hostname-override=Node-1.Example.COM",
			"--node-ip=10.0.0.5,fd00::5",
			"--node-labels=zone=a,node.kubernetes.io/pool=gpu",
			"--node-labels=kubernetes.io/os=linux",
			"--register-with-taints=dedicated=infra:NoSchedule,gpu:NoExecute",
			"--root-dir=/srv/berth", "--cert-dir=/srv/berth/pki",
			"--pod-infra-container-image=registry.example/pause:9",
			"--cloud-provider=", "--maximum-dead-containers=-1", // defaults are accepted
		}},
		{name: "node-flags-invalid", args: []string{
			"--hostname-override=not_a_dns_name",
			"--node-ip=10.0.0.5,10.0.0.6",
			"--node-labels=kubernetes.io/role=master,bad key=x",
			"--root-dir=",
			"--max-pods=-1",
			"--max-open-files=-1",
			"--vmodule=a=1",
			"--cloud-provider=external",
			"--runtime-cgroups=runtime",
			"--exit-on-lock-contention",
		}},
		{name: "kubeconfig-problems", args: []string{
			"--config=testdata/minimal.yaml",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
		}},
		// With a bootstrap kubeconfig, --kubeconfig need not exist yet.
		{name: "bootstrap", args: []string{
			"--config=testdata/minimal.yaml",
			"--kubeconfig=/etc/kubernetes/kubelet.conf",
			"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--rotate-certificates", "--rotate-server-certificates",
		}},
		{name: "bootstrap-problems", args: []string{
			"--config=testdata/minimal.yaml",
			"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
			"--rotate-server-certificates",
		}},
		{name: "no-hostname", hostname: "-", args: nil},
		{name: "gc", args: []string{"--config=testdata/gc.yaml",
			"--minimum-container-ttl-duration=1m", "--maximum-dead-containers-per-container=2", "--maximum-dead-containers=100"}},
		{name: "gc-invalid", args: []string{"--config=testdata/gc-invalid.yaml", "--minimum-container-ttl-duration=-1s"}},
		{name: "gc-flags-invalid", args: []string{"--image-gc-high-threshold=50", "--image-gc-low-threshold=50"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hostname := tc.hostname
			switch hostname {
			case "":
				hostname = "Test-Host"
			case "-":
				hostname = ""
			}
			flags := parseFlags(t, tc.args)
			cfg, err := Load(context.Background(), flags, testEnv(hostname))
			var got []byte
			if err != nil {
				got = []byte("error: " + err.Error() + "\n")
			} else if got, err = yaml.Marshal(cfg); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, got)
		})
	}
}
