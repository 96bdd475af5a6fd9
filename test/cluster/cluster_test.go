package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestKubeconfig(t *testing.T) {
	kc := Kubeconfig("https://127.0.0.1:6443", []byte("CA"), "system:node:node-a", KeyPair{CertPEM: []byte("CERT"), KeyPEM: []byte("KEY")})
	var got map[string]any
	if err := yaml.Unmarshal(kc, &got); err != nil {
		t.Fatalf("parse kubeconfig: %v\n%s", err, kc)
	}
	want := map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "berth-dev", "cluster": map[string]any{
			"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}}},
		"users": []any{map[string]any{"name": "system:node:node-a", "user": map[string]any{
			"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ"}}},
		"contexts": []any{map[string]any{"name": "system:node:node-a", "context": map[string]any{
			"cluster": "berth-dev", "user": "system:node:node-a"}}},
		"current-context": "system:node:node-a",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubeconfig (-want +got):\n%s", diff)
	}
}

// flagValues maps --name=value arguments to their values.
func flagValues(t *testing.T, args []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Fatalf("argument %q is not --name=value", a)
		}
		if _, dup := m[name]; dup {
			t.Fatalf("flag --%s given twice", name)
		}
		m[name] = value
	}
	return m
}

func TestArgs(t *testing.T) {
	l := Layout{Dir: "/c", Ports: Ports{EtcdClient: 1, EtcdPeer: 2, APIServer: 3, ControllerManager: 4, Scheduler: 5, MetricsServer: 6}}
	for _, tc := range []struct {
		name string
		args []string
		want map[string]string // a subset of the flags
	}{
		{"etcd", EtcdArgs(l), map[string]string{
			"data-dir":           "/c/etcd",
			"listen-client-urls": "https://127.0.0.1:1",
			"listen-peer-urls":   "http://127.0.0.1:2",
			"client-cert-auth":   "true",
			"trusted-ca-file":    "/c/pki/ca.crt",
		}},
		{"kube-apiserver", APIServerArgs(l), map[string]string{
			"bind-address":                     "127.0.0.1",
			"secure-port":                      "3",
			"authorization-mode":               "Node,RBAC",
			"enable-admission-plugins":         "NodeRestriction",
			"service-cluster-ip-range":         "10.0.0.0/24",
			"kubelet-preferred-address-types":  "InternalIP,ExternalIP,Hostname",
			"kubelet-client-certificate":       "/c/pki/apiserver-kubelet-client.crt",
			"client-ca-file":                   "/c/pki/ca.crt",
			"etcd-servers":                     "https://127.0.0.1:1",
			"allow-privileged":                 "true",
			"service-account-key-file":         "/c/pki/sa.pub",
			"service-account-signing-key-file": "/c/pki/sa.key",
			"requestheader-client-ca-file":     "/c/pki/front-proxy-ca.crt",
			"proxy-client-cert-file":           "/c/pki/front-proxy-client.crt",
		}},
		{"kube-controller-manager", ControllerManagerArgs(l), map[string]string{
			"kubeconfig":                       "/c/controller-manager.kubeconfig",
			"secure-port":                      "4",
			"use-service-account-credentials":  "true",
			"cluster-signing-cert-file":        "/c/pki/ca.crt",
			"cluster-signing-key-file":         "/c/pki/ca.key",
			"root-ca-file":                     "/c/pki/ca.crt",
			"service-account-private-key-file": "/c/pki/sa.key",
		}},
		{"kube-scheduler", SchedulerArgs(l), map[string]string{
			"kubeconfig":   "/c/scheduler.kubeconfig",
			"bind-address": "127.0.0.1",
			"secure-port":  "5",
		}},
		{"metrics-server", MetricsServerArgs(l, false), map[string]string{
			"kubeconfig":                      "/c/metrics-server.kubeconfig",
			"authentication-kubeconfig":       "/c/metrics-server.kubeconfig",
			"authorization-kubeconfig":        "/c/metrics-server.kubeconfig",
			"bind-address":                    "127.0.0.1",
			"secure-port":                     "6",
			"tls-cert-file":                   "/c/pki/metrics-server-serving.crt",
			"kubelet-preferred-address-types": "InternalIP",
			"kubelet-use-node-status-port":    "true",
			"metric-resolution":               "10s",
			"kubelet-request-timeout":         "5s",
			"kubelet-insecure-tls":            "true",
			"kubelet-certificate-authority":   "",
		}},
		{"metrics-server verifying kubelets", MetricsServerArgs(l, true), map[string]string{
			"kubelet-insecure-tls":          "",
			"kubelet-certificate-authority": "/c/pki/ca.crt",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := flagValues(t, tc.args)
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("--%s = %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "a\nb\n", 10, "a\nb\n"},
		{"cut at a line start", "first line\nsecond\nthird\n", 10, "third\n"},
		{"no newline in range", "abcdefghij", 4, "ghij"},
		{"newline last", "abcdef\n", 3, "ef\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tail([]byte(tc.in), tc.n); got != tc.want {
				t.Errorf("tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "test", "cluster")
	other := filepath.Join(root, "tools", "kube")
	for _, d := range []string{deep, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "// berth\nmodule github.com/berthk8s/berth\n\ngo 1.26\n")
	write(filepath.Join(other, "go.mod"), "module github.com/berthk8s/berth/tools/kube\n")
	for _, dir := range []string{root, deep, other} {
		if got, err := repoRoot(dir); err != nil || got != root {
			t.Errorf("repoRoot(%q) = %q, %v; want %q", dir, got, err, root)
		}
	}
	if _, err := repoRoot(t.TempDir()); err == nil {
		t.Errorf("repoRoot outside a berth repository: want an error")
	}
}

func TestCheckBinaries(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{Etcd, APIServer, Kubectl} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	err := CheckBinaries(dir)
	if err == nil || !strings.Contains(err.Error(), "kube-controller-manager, kube-scheduler; run `make cluster-tools`") {
		t.Errorf("CheckBinaries = %v, want the missing binaries and `make cluster-tools`", err)
	}
	for _, name := range []string{ControllerManager, Scheduler} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckBinaries(dir); err != nil {
		t.Errorf("CheckBinaries with every binary = %v", err)
	}
	err = CheckBinaries(dir, Options{MetricsServer: true}.binaries()...)
	if err == nil || !strings.Contains(err.Error(), "missing in "+dir+": metrics-server;") {
		t.Errorf("CheckBinaries for a cluster with metrics-server = %v, want metrics-server missing", err)
	}
}

func TestNodeKubeconfigRefusesBadNames(t *testing.T) {
	c := &Cluster{nodes: map[string]string{}}
	for _, name := range []string{"", "Node-A", "../x", "a/b", "-a", strings.Repeat("a", 254)} {
		if _, err := c.NodeKubeconfig(name); err == nil {
			t.Errorf("NodeKubeconfig(%q): want an error", name)
		}
	}
}

// TestStartReportsAComponentThatExits starts a cluster whose etcd is a
// script that fails: Start returns the exit and the log's tail, and leaves
// no directory behind.
func TestStartReportsAComponentThatExits(t *testing.T) {
	bin := t.TempDir()
	for _, name := range Binaries() {
		script := "#!/bin/sh\nexit 0\n"
		if name == Etcd {
			script = "#!/bin/sh\necho \"etcd: cannot start: $1\" >&2\nexit 3\n"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	_, err := Start(t.Context(), Options{BinDir: bin, TempDir: tmp})
	if err == nil {
		t.Fatal("Start with a failing etcd: want an error")
	}
	for _, want := range []string{"etcd exited: exit status 3", "etcd: cannot start: --name=berth-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left behind in the temp dir: %v", entries)
	}
}

func TestStartWithoutBinaries(t *testing.T) {
	_, err := Start(t.Context(), Options{BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "run `make cluster-tools`") {
		t.Errorf("Start without binaries = %v, want a hint to run make cluster-tools", err)
	}
}
