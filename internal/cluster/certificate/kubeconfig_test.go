package certificate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestUsable is the decision whether to bootstrap: each row writes a
// kubeconfig (or none) and says whether it is still usable at testNow.
func TestUsable(t *testing.T) {
	hour := time.Hour
	valid := func(t *testing.T) pair { return newPair(t, "system:node:n1", testNow.Add(-hour), testNow.Add(hour)) }
	tests := []struct {
		name string
		// setup writes the files into dir and returns the kubeconfig path.
		setup      func(t *testing.T, dir string) string
		want       bool
		wantReason string
	}{
		{"missing kubeconfig", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope.conf") }, false, "does not exist"},
		{"valid, inline", func(t *testing.T, dir string) string {
			p := valid(t)
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: p.cert, ClientKeyData: p.key})
		}, true, ""},
		{"valid, files relative to the kubeconfig", func(t *testing.T, dir string) string {
			p := valid(t)
			writeFile(t, filepath.Join(dir, "client.pem"), append(p.cert, p.key...))
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificate: "client.pem", ClientKey: "client.pem"})
		}, true, ""},
		{"expired certificate", func(t *testing.T, dir string) string {
			p := newPair(t, "system:node:n1", testNow.Add(-2*hour), testNow.Add(-time.Second))
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: p.cert, ClientKeyData: p.key})
		}, false, "expired"},
		// As upstream, only NotAfter counts: a skewed clock must not throw
		// away a fresh certificate.
		{"certificate not valid yet", func(t *testing.T, dir string) string {
			p := newPair(t, "system:node:n1", testNow.Add(hour), testNow.Add(2*hour))
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: p.cert, ClientKeyData: p.key})
		}, true, ""},
		{"unreadable: not a kubeconfig", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "kubelet.conf")
			writeFile(t, path, []byte("{not yaml: ["))
			return path
		}, false, "does not load"},
		{"unreadable: certificate file missing", func(t *testing.T, dir string) string {
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificate: "gone.pem", ClientKey: "gone.pem"})
		}, false, "does not load"},
		{"key does not match the certificate", func(t *testing.T, dir string) string {
			a, b := valid(t), valid(t)
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: a.cert, ClientKeyData: b.key})
		}, false, "do not load"},
		{"token, no client certificate", func(t *testing.T, dir string) string {
			return writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"})
		}, false, "no client certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t, t.TempDir())
			got, reason, err := Usable(path, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || !strings.Contains(reason, tc.wantReason) {
				t.Errorf("Usable = %v, %q; want %v, a reason with %q", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestUsableCannotExamine: a path that exists but cannot be examined stops
// the start instead of bootstrapping over it.
func TestUsableCannotExamine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, nil)
	if _, _, err := Usable(filepath.Join(file, "kubelet.conf"), testNow); err == nil {
		t.Error("Usable of a path under a regular file: no error")
	}
}

func TestBootstrappedKubeconfig(t *testing.T) {
	const pem = "/var/lib/kubelet/pki/kubelet-client-current.pem"
	auth := map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pem, ClientKey: pem}}
	ctxs := map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}}
	tests := []struct {
		name string
		boot *rest.Config
		want *clientcmdapi.Cluster
	}{
		{"CA file is referenced, not copied",
			&rest.Config{Host: "https://api:6443", BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{CAFile: "/etc/kubernetes/pki/ca.crt", CAData: []byte("ignored")}},
			&clientcmdapi.Cluster{Server: "https://api:6443", CertificateAuthority: "/etc/kubernetes/pki/ca.crt"}},
		{"CA data is copied",
			&rest.Config{Host: "https://api:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("PEM")}},
			&clientcmdapi.Cluster{Server: "https://api:6443", CertificateAuthorityData: []byte("PEM")}},
		{"insecure stays insecure",
			&rest.Config{Host: "https://api:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
			&clientcmdapi.Cluster{Server: "https://api:6443", InsecureSkipTLSVerify: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := clientcmdapi.Config{
				Clusters: map[string]*clientcmdapi.Cluster{"default-cluster": tc.want}, AuthInfos: auth, Contexts: ctxs,
				CurrentContext: "default-context",
			}
			if diff := cmp.Diff(want, BootstrappedKubeconfig(tc.boot, pem)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWrittenKubeconfigLoads writes the kubeconfig, puts a pair where it
// points, and checks it is then Usable and carries no bootstrap token.
func TestWrittenKubeconfigLoads(t *testing.T) {
	dir := t.TempDir()
	pemPath := filepath.Join(dir, "pki", "kubelet-client-current.pem")
	if err := os.MkdirAll(filepath.Dir(pemPath), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubelet.conf")
	boot := &rest.Config{Host: "https://api:6443", BearerToken: "abcdef.0123456789abcdef", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if err := writeKubeconfig(boot, path, pemPath); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := Usable(path, testNow); ok {
		t.Error("usable before the pair exists")
	}
	p := newPair(t, "system:node:n1", testNow.Add(-time.Hour), testNow.Add(time.Hour))
	writeFile(t, pemPath, append(p.cert, p.key...))
	if ok, reason, err := Usable(path, testNow); !ok || err != nil {
		t.Errorf("Usable = %v, %q, %v; want usable", ok, reason, err)
	}
	cfg, err := loadRESTConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "" || cfg.Host != boot.Host || cfg.CertFile != pemPath {
		t.Errorf("written kubeconfig: token %q host %q cert %q", cfg.BearerToken, cfg.Host, cfg.CertFile)
	}
}
