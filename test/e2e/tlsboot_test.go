package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/berthk8s/berth/test/cluster"
)

// certLife is kube-controller-manager's --cluster-signing-duration here.
// The signer backdates NotBefore by 5 minutes, so a certificate lives
// 5m+certLife and client-go renews it at 70-90% of that: between 20s
// before and 60s after it is issued.
const certLife = 100 * time.Second

// TestTLSBootstrap joins berth as kubeadm join does: only a bootstrap
// kubeconfig (a bootstrap token), rotateCertificates and
// serverTLSBootstrap. berth gets its client certificate through an
// auto-approved CSR, becomes a Ready node and runs a pod; its client
// certificate rotates and the old one expires while the pod keeps running
// and the node keeps renewing its lease; its serving certificate is issued
// once the test approves the CSR, and `kubectl logs` then works with the
// API server verifying it against the cluster CA.
func TestTLSBootstrap(t *testing.T) {
	requireE2E(t)
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Options{VerifyKubelets: true, SigningDuration: certLife})
	if err != nil {
		t.Fatalf("start control plane (run `make cluster-tools` first): %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager log: %s", cl.LogPath("kube-controller-manager"))
		}
		if err := cl.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.AdminKubeconfig())
	must(t, err)
	admin, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	boot, err := cl.BootstrapKubeconfig(ctx)
	must(t, err)

	n := newNode(t, "nodeStatusUpdateFrequency: 2s", "nodeLeaseDurationSeconds: 8",
		"clusterDNS: ["+e2eClusterDNS+"]", "clusterDomain: "+e2eClusterDomain,
		"rotateCertificates: true", "serverTLSBootstrap: true")
	apiArgs := kubeletAPIArgs(t, cl.CAFile())
	certDir := apiArgs[len(apiArgs)-1] // kubeletAPIArgs ends with --cert-dir <dir>
	kubeconfig := filepath.Join(t.TempDir(), "kubelet.conf")
	n.extraArgs = append([]string{"--bootstrap-kubeconfig", boot, "--kubeconfig", kubeconfig}, apiArgs...)
	e := &clusterEnv{cl: cl, node: n, admin: admin}
	n.start()
	defer n.stop()

	e.testNodeReady(t)
	first := clientCert(t, certDir)
	if first.Subject.CommonName != "system:node:"+nodeName || strings.Join(first.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("client certificate subject %v, want system:node:%s in system:nodes", first.Subject, nodeName)
	}
	written, err := clientcmd.LoadFromFile(kubeconfig)
	must(t, err)
	if a := written.AuthInfos["default-auth"]; a == nil || a.ClientCertificate != filepath.Join(certDir, "kubelet-client-current.pem") || a.Token != "" {
		t.Errorf("written kubeconfig's user: %+v", a)
	}

	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err = admin.CoreV1().Pods("default").Create(ctx, busyboxPod("boot-chatty", "echo hello-bootstrap; while true; do sleep 1; done"), metav1.CreateOptions{})
	must(t, err)
	pod := e.waitPodRunning(t, "boot-chatty")
	containerID := pod.Status.ContainerStatuses[0].ContainerID

	approveServingCSR(t, e)
	e.node.waitFor("serving certificate issued", func() bool {
		_, err := os.Stat(filepath.Join(certDir, "kubelet-server-current.pem"))
		return err == nil
	})
	e.node.waitFor("kubectl logs through the verified serving certificate", func() bool {
		out, err := cl.Kubectl(ctx, "logs", "boot-chatty")
		if err != nil {
			t.Logf("kubectl logs: %v", err)
		}
		return err == nil && strings.Contains(out, "hello-bootstrap")
	})

	// Rotation: a new client certificate, then the first one expires; the
	// lease keeps being renewed after that, so the clients use the new one.
	e.node.waitFor("client certificate rotated", func() bool {
		return clientCert(t, certDir).SerialNumber.Cmp(first.SerialNumber) != 0
	})
	if wait := time.Until(first.NotAfter) + 3*time.Second; wait > 0 {
		t.Logf("waiting %s for the first client certificate to expire", wait.Round(time.Second))
		time.Sleep(wait)
	}
	afterExpiry := time.Now()
	e.waitAPI(t, "lease renewed after the first certificate expired", func(ctx context.Context) (bool, error) {
		l, err := admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(afterExpiry), err
	})
	got, err := admin.CoreV1().Pods("default").Get(ctx, "boot-chatty", metav1.GetOptions{})
	must(t, err)
	st := got.Status.ContainerStatuses[0]
	if st.ContainerID != containerID || st.RestartCount != 0 || st.State.Running == nil {
		t.Errorf("container after rotation: id %s (was %s), restarts %d, state %+v", st.ContainerID, containerID, st.RestartCount, st.State)
	}
	if !strings.Contains(readLog(t, n), "Client certificate rotated") {
		t.Error("berth did not log closing the connections of the old certificate")
	}
}

// clientCert reads the node's current client certificate from the cert dir.
func clientCert(t *testing.T, certDir string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(certDir, "kubelet-client-current.pem"))
	must(t, err)
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(block.Bytes)
			must(t, err)
			return c
		}
	}
	t.Fatal("no certificate in kubelet-client-current.pem")
	return nil
}

// approveServingCSR waits for the node's kubelet-serving CSR, checks what it
// asks for, and approves it as a cluster admin would: kube-controller-
// manager does not approve serving certificates.
func approveServingCSR(t *testing.T, e *clusterEnv) {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	e.waitAPI(t, "kubelet-serving CSR", func(ctx context.Context) (bool, error) {
		list, err := e.admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			c := &list.Items[i]
			if c.Spec.SignerName == certificatesv1.KubeletServingSignerName && c.Spec.Username == "system:node:"+nodeName {
				csr = c
				return true, nil
			}
		}
		return false, nil
	})
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		t.Fatal("serving CSR holds no PEM request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	must(t, err)
	node, err := e.admin.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	must(t, err)
	if req.Subject.CommonName != "system:node:"+nodeName || len(req.IPAddresses) == 0 {
		t.Errorf("serving CSR subject %v, IPs %v", req.Subject, req.IPAddresses)
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && !containsIP(req, a.Address) {
			t.Errorf("serving CSR IPs %v lack the node's InternalIP %s", req.IPAddresses, a.Address)
		}
		if a.Type == corev1.NodeHostName && !strings.Contains(strings.Join(req.DNSNames, ","), a.Address) {
			t.Errorf("serving CSR DNS names %v lack the node's host name %s", req.DNSNames, a.Address)
		}
	}
	if out, err := e.cl.Kubectl(context.Background(), "certificate", "approve", csr.Name); err != nil {
		t.Fatalf("approve %s: %v: %s", csr.Name, err, out)
	}
}

func containsIP(req *x509.CertificateRequest, ip string) bool {
	for _, x := range req.IPAddresses {
		if x.String() == ip {
			return true
		}
	}
	return false
}

func readLog(t *testing.T, n *node) string {
	t.Helper()
	s, err := readFile(n.logPath)
	must(t, err)
	return s
}
