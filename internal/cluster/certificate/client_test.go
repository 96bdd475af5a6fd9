package certificate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestNewClient covers the starts that send no request: which credentials
// the clients get, what is written, and that a usable --kubeconfig is
// never replaced by bootstrapping.
func TestNewClient(t *testing.T) {
	now := time.Now() // the certificate manager reads the real clock
	clk := clocktesting.NewFakeClock(now)
	valid := newPair(t, "system:node:n1", now.Add(-time.Hour), now.Add(time.Hour))
	ctx := context.Background()

	t.Run("no rotation, usable kubeconfig: used as it is, bootstrap file not read", func(t *testing.T) {
		dir := t.TempDir()
		kubeconfig := writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: valid.cert, ClientKeyData: valid.key})
		c, err := NewClient(ctx, ClientOptions{Kubeconfig: kubeconfig, BootstrapKubeconfig: filepath.Join(dir, "missing"),
			CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if cfg := c.Config(); cfg.Transport != nil || !bytes.Equal(cfg.CertData, valid.cert) || c.Current() != nil {
			t.Errorf("config: transport %v, cert from the kubeconfig %v", cfg.Transport, bytes.Equal(cfg.CertData, valid.cert))
		}
	})

	t.Run("rotation, usable kubeconfig: its pair seeds the store, one rotating transport", func(t *testing.T) {
		dir := t.TempDir()
		kubeconfig := writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{ClientCertificateData: valid.cert, ClientKeyData: valid.key})
		before, _ := os.ReadFile(kubeconfig)
		c, err := NewClient(ctx, ClientOptions{Kubeconfig: kubeconfig, BootstrapKubeconfig: filepath.Join(dir, "missing"),
			CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Rotate: true, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		cfg := c.Config()
		if cfg.Transport == nil || cfg.CertData != nil || cfg.BearerToken != "" {
			t.Errorf("config: transport %v, cert data %d bytes, token %q", cfg.Transport, len(cfg.CertData), cfg.BearerToken)
		}
		if cur := c.Current(); cur == nil || !bytes.Equal(cur.Certificate[0], tlsPair(t, valid).Certificate[0]) {
			t.Error("the manager does not start from the kubeconfig's certificate")
		}
		if after, _ := os.ReadFile(kubeconfig); !bytes.Equal(before, after) {
			t.Error("a usable kubeconfig was rewritten")
		}
	})

	t.Run("rotation, no kubeconfig: written to point at the store, no certificate yet", func(t *testing.T) {
		dir := t.TempDir()
		boot := writeKubeconfigFile(t, dir, &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"})
		kubeconfig := filepath.Join(dir, "kubelet.conf.new")
		certDir := filepath.Join(dir, "pki")
		c, err := NewClient(ctx, ClientOptions{Kubeconfig: kubeconfig, BootstrapKubeconfig: boot, CertDir: certDir,
			NodeName: "n1", Rotate: true, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if c.Current() != nil || c.Config().Transport == nil || c.Config().BearerToken != "" {
			t.Errorf("current %v, transport %v, token %q: want no certificate, a transport, no token", c.Current(), c.Config().Transport, c.Config().BearerToken)
		}
		written, err := clientcmd.LoadFromFile(kubeconfig)
		if err != nil {
			t.Fatalf("kubeconfig not written: %v", err)
		}
		pem := filepath.Join(certDir, "kubelet-client-current.pem")
		auth, cluster := written.AuthInfos["default-auth"], written.Clusters["default-cluster"]
		if auth == nil || cluster == nil || auth.ClientCertificate != pem || auth.ClientKey != pem || auth.Token != "" || cluster.Server != "https://10.0.0.1:6443" {
			t.Errorf("written kubeconfig: %+v %+v", auth, cluster)
		}
	})

	t.Run("no kubeconfig path", func(t *testing.T) {
		if _, err := NewClient(ctx, ClientOptions{Clock: clk}); err == nil {
			t.Error("no error")
		}
	})
}
