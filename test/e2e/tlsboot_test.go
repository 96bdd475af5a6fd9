package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
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
// auto-approved CSR, becomes a Ready node and runs a pod; its serving
// certificate is issued once the test approves the CSR, and `kubectl logs`
// then works with the API server verifying it against the cluster CA; its
// client certificate rotates and the old one expires while the pod keeps
// running and the node keeps renewing its lease. Then, without rotation,
// berth bootstraps once, and a restart with the kubeconfig it wrote sends
// no new CSR.
func TestTLSBootstrap(t *testing.T) {
	e, boot := startBootstrapCluster(t)
	n, certDir, kubeconfig := bootstrapNode(t, e, boot, true)
	e.node = n
	n.start()
	defer n.stop()

	e.testNodeReady(t)
	first := clientCert(t, certDir)
	if first.Subject.CommonName != "system:node:"+nodeName || strings.Join(first.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("client certificate subject %v, want system:node:%s in system:nodes", first.Subject, nodeName)
	}
	checkWrittenKubeconfig(t, kubeconfig, certDir)
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(),
		busyboxPod("boot-chatty", "echo hello-bootstrap; while true; do sleep 1; done"), metav1.CreateOptions{})
	must(t, err)
	containerID := e.waitPodRunning(t, "boot-chatty").Status.ContainerStatuses[0].ContainerID

	t.Run("ServingCertificate", func(t *testing.T) { testServingCertificate(t, e, certDir) })
	t.Run("ClientCertificateRotates", func(t *testing.T) { testClientRotation(t, e, certDir, first, containerID) })
	n.stop()
	t.Run("BootstrapOnceWithoutRotation", func(t *testing.T) { testBootstrapOnce(t, e, boot) })
}

// startBootstrapCluster starts a control plane that signs short-lived
// certificates and verifies kubelets' serving certificates, and returns
// it with a bootstrap kubeconfig.
func startBootstrapCluster(t *testing.T) (*clusterEnv, string) {
	t.Helper()
	requireE2E(t)
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Options{VerifyKubelets: true, SigningDuration: certLife})
	if err != nil {
		t.Fatalf("start control plane (run `make cluster-tools` first): %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-apiserver and kube-controller-manager logs: %s, %s", cl.LogPath("kube-apiserver"), cl.LogPath("kube-controller-manager"))
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
	return &clusterEnv{cl: cl, admin: admin}, boot
}

// bootstrapNode prepares a berth node given only the bootstrap kubeconfig
// and the path of the kubeconfig to write; rotate sets rotateCertificates
// and serverTLSBootstrap.
func bootstrapNode(t *testing.T, e *clusterEnv, boot string, rotate bool) (n *node, certDir, kubeconfig string) {
	t.Helper()
	lines := []string{"nodeStatusUpdateFrequency: 2s", "nodeLeaseDurationSeconds: 8",
		"clusterDNS: [" + e2eClusterDNS + "]", "clusterDomain: " + e2eClusterDomain}
	if rotate {
		lines = append(lines, "rotateCertificates: true", "serverTLSBootstrap: true")
	}
	n = newNode(t, lines...)
	apiArgs := kubeletAPIArgs(t, e.cl.CAFile())
	certDir = apiArgs[len(apiArgs)-1] // kubeletAPIArgs ends with --cert-dir <dir>
	kubeconfig = filepath.Join(t.TempDir(), "kubelet.conf")
	n.extraArgs = append([]string{"--bootstrap-kubeconfig", boot, "--kubeconfig", kubeconfig}, apiArgs...)
	return n, certDir, kubeconfig
}

// checkWrittenKubeconfig: --kubeconfig names the current pair in the cert
// dir and carries no bootstrap token.
func checkWrittenKubeconfig(t *testing.T, kubeconfig, certDir string) {
	t.Helper()
	written, err := clientcmd.LoadFromFile(kubeconfig)
	must(t, err)
	if a := written.AuthInfos["default-auth"]; a == nil || a.ClientCertificate != filepath.Join(certDir, "kubelet-client-current.pem") || a.Token != "" {
		t.Errorf("written kubeconfig's user: %+v", a)
	}
}

func testServingCertificate(t *testing.T, e *clusterEnv, certDir string) {
	approveServingCSR(t, e)
	e.node.waitFor("serving certificate issued", func() bool {
		_, err := os.Stat(filepath.Join(certDir, "kubelet-server-current.pem"))
		return err == nil
	})
	e.node.waitFor("kubectl logs through the verified serving certificate", func() bool {
		out, err := e.cl.Kubectl(context.Background(), "logs", "boot-chatty")
		if err != nil {
			t.Logf("kubectl logs: %v", err)
		}
		return err == nil && strings.Contains(out, "hello-bootstrap")
	})
	// Checked now: the test approves this one serving CSR only, so the
	// certificate expires unrenewed within two minutes, and the gauge is
	// +Inf then, as upstream's.
	expectFiniteTTL(t, e, "kubelet_certificate_manager_server_ttl_seconds ")
}

// expectFiniteTTL: the node's /metrics reports the named certificate TTL
// gauge with a finite value.
func expectFiniteTTL(t *testing.T, e *clusterEnv, name string) {
	t.Helper()
	body, err := httpGet(e.node.url("/metrics"))
	must(t, err)
	if !strings.Contains(body, name) || strings.Contains(body, name+"+Inf") {
		t.Errorf("/metrics has no finite %s", name)
	}
}

// testClientRotation waits for a new client certificate, then for the
// first one to expire: the lease renewed after that shows every client
// uses the new one.
func testClientRotation(t *testing.T, e *clusterEnv, certDir string, first *x509.Certificate, containerID string) {
	ctx := context.Background()
	e.node.waitFor("client certificate rotated", func() bool {
		return clientCert(t, certDir).SerialNumber.Cmp(first.SerialNumber) != 0
	})
	if wait := time.Until(first.NotAfter) + 3*time.Second; wait > 0 {
		t.Logf("waiting %s for the first client certificate to expire", wait.Round(time.Second))
		time.Sleep(wait)
	}
	e.waitAPI(t, "lease renewed after the first certificate expired", leaseRenewedAfter(e, time.Now()))
	got, err := e.admin.CoreV1().Pods("default").Get(ctx, "boot-chatty", metav1.GetOptions{})
	must(t, err)
	st := got.Status.ContainerStatuses[0]
	if st.ContainerID != containerID || st.RestartCount != 0 || st.State.Running == nil {
		t.Errorf("container after rotation: id %s (was %s), restarts %d, state %+v", st.ContainerID, containerID, st.RestartCount, st.State)
	}
	expectFiniteTTL(t, e, "kubelet_certificate_manager_client_ttl_seconds ")
	if !strings.Contains(readLog(t, e.node), "Client certificate rotated") {
		t.Error("berth did not log closing the connections of the old certificate")
	}
	// A connection kept from before a rotation presents the old, expired
	// certificate: its requests fail authentication (401). Closing them at
	// rotation means none.
	if n := failedAuthentications(t, e); n != 0 {
		t.Errorf("kube-apiserver failed to authenticate %d requests: a connection outlived its client certificate", n)
	}
}

// failedAuthentications is kube-apiserver's
// authentication_attempts{result="error"}: requests whose credentials did
// not verify.
func failedAuthentications(t *testing.T, e *clusterEnv) int {
	t.Helper()
	raw, err := e.admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	must(t, err)
	total := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, `authentication_attempts{result="error"}`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		must(t, err)
		total += int(v)
	}
	return total
}

// testBootstrapOnce: without rotation, berth requests one client
// certificate before it starts; restarted with the kubeconfig it wrote, it
// requests none.
func testBootstrapOnce(t *testing.T, e *clusterEnv, boot string) {
	n, certDir, kubeconfig := bootstrapNode(t, e, boot, false)
	e.node = n
	before := clientCSRs(t, e)
	started := time.Now()
	n.start()
	e.waitAPI(t, "lease renewed by the bootstrapped node", leaseRenewedAfter(e, started))
	if got := clientCSRs(t, e); got != before+1 {
		t.Errorf("%d client CSRs after bootstrapping, want %d", got, before+1)
	}
	checkWrittenKubeconfig(t, kubeconfig, certDir)
	serial := clientCert(t, certDir).SerialNumber
	n.stop()
	restarted := time.Now()
	n.start()
	e.waitAPI(t, "lease renewed after the restart", leaseRenewedAfter(e, restarted))
	if got := clientCSRs(t, e); got != before+1 {
		t.Errorf("%d client CSRs after a restart with a usable kubeconfig, want %d", got, before+1)
	}
	if clientCert(t, certDir).SerialNumber.Cmp(serial) != 0 {
		t.Error("the client certificate changed on a restart without rotation")
	}
}

// leaseRenewedAfter holds once the node's lease was renewed after since.
func leaseRenewedAfter(e *clusterEnv, since time.Time) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		l, err := e.admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since), err
	}
}

// clientCSRs counts the node client CSRs.
func clientCSRs(t *testing.T, e *clusterEnv) int {
	t.Helper()
	list, err := e.admin.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	must(t, err)
	n := 0
	for _, c := range list.Items {
		if c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName {
			n++
		}
	}
	return n
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
