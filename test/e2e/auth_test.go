package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berthk8s/berth/test/cluster"
)

// kubeletAPIPort is the kubelet API port of the cluster node: the API
// server dials the port the node advertises.
const kubeletAPIPort = 10250

// kubeletAPIArgs are berth's extra arguments for a cluster node: a
// --config-dir drop-in that serves the kubelet API on :10250 with x509
// client certificates against the cluster CA, TokenReview and
// SubjectAccessReview (as kubeadm configures a kubelet), and a private
// --cert-dir for the self-signed serving certificate.
func kubeletAPIArgs(t *testing.T, caFile string) []string {
	dir := t.TempDir()
	dropIns := filepath.Join(dir, "kubelet.conf.d")
	must(t, os.MkdirAll(dropIns, 0o755))
	must(t, os.WriteFile(filepath.Join(dropIns, "10-kubelet-api.conf"), []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
enableServer: true
address: 0.0.0.0
port: %d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
`, kubeletAPIPort, caFile)), 0o644))
	return []string{"--config-dir", dropIns, "--cert-dir", filepath.Join(dir, "pki")}
}

// kubeletClient calls the node's kubelet API over TLS (the serving
// certificate is self-signed) as the identity given: a client certificate,
// a bearer token, or nothing.
type kubeletClient struct {
	http  *http.Client
	token string
}

func newKubeletClient(t *testing.T, cert *tls.Certificate, token string) *kubeletClient {
	t.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // berth's serving certificate is self-signed
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &kubeletClient{http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}, token: token}
}

// do sends method path and returns the status code and body.
func (k *kubeletClient) do(t *testing.T, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, fmt.Sprintf("https://127.0.0.1:%d%s", kubeletAPIPort, path), nil)
	must(t, err)
	if k.token != "" {
		req.Header.Set("Authorization", "Bearer "+k.token)
	}
	resp, err := k.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (k *kubeletClient) expect(t *testing.T, method, path string, want int, wantBody string) {
	t.Helper()
	code, body := k.do(t, method, path)
	if code != want || !strings.Contains(body, wantBody) {
		t.Errorf("%s %s = %d %q, want %d containing %q", method, path, code, body, want, wantBody)
	}
}

// TestClusterKubeletAuth checks who may use the kubelet API of a cluster
// node: nobody anonymously, a nodes/stats-only user for stats and nothing
// else, and the API server's own kubelet client certificate for everything.
func TestClusterKubeletAuth(t *testing.T) {
	env := startClusterEnv(t)
	env.node.start()
	ctx := context.Background()
	env.waitAPI(t, "node registered", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil, nil
	})
	grantNodesStats(t, env, "stats-reader")
	anonymous := newKubeletClient(t, nil, "")
	env.node.waitFor("kubelet API serving", func() bool {
		req, err := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d/healthz", kubeletAPIPort), nil)
		must(t, err)
		resp, err := anonymous.http.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})

	// The API server's kubelet client: system:masters, allowed by RBAC.
	apiserverPair, err := tls.LoadX509KeyPair(filepath.Join(env.cl.Dir(), "pki", "apiserver-kubelet-client.crt"),
		filepath.Join(env.cl.Dir(), "pki", "apiserver-kubelet-client.key"))
	must(t, err)
	apiserver := newKubeletClient(t, &apiserverPair, "")

	kp, err := env.cl.IssueClientCert("stats-reader")
	must(t, err)
	statsPair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	must(t, err)
	statsUser := newKubeletClient(t, &statsPair, "")

	t.Run("AnonymousIsUnauthorized", func(t *testing.T) {
		anonymous.expect(t, "GET", "/pods", http.StatusUnauthorized, "Unauthorized")
	})
	t.Run("ForeignCertificateIsUnauthorized", func(t *testing.T) {
		ca, err := cluster.NewCA(rand.Reader, time.Now(), "other-ca")
		must(t, err)
		other, err := ca.Issue(cluster.ClientSpec("kube-apiserver-kubelet-client", "system:masters"))
		must(t, err)
		pair, err := tls.X509KeyPair(other.CertPEM, other.KeyPEM)
		must(t, err)
		newKubeletClient(t, &pair, "").expect(t, "GET", "/pods", http.StatusUnauthorized, "Unauthorized")
	})
	t.Run("StatsUserReadsStatsOnly", func(t *testing.T) {
		statsUser.expect(t, "GET", "/stats/summary", http.StatusOK, `"nodeName":"`+nodeName+`"`)
		statsUser.expect(t, "POST", "/exec/default/web/web?command=true&output=1", http.StatusForbidden,
			"Forbidden (user=stats-reader, verb=create, resource=nodes, subresource(s)=[proxy])")
		statsUser.expect(t, "GET", "/containerLogs/default/web/web", http.StatusForbidden,
			"Forbidden (user=stats-reader, verb=get, resource=nodes, subresource(s)=[proxy])")
		statsUser.expect(t, "GET", "/pods", http.StatusForbidden, "subresource(s)=[pods proxy]")
	})
	t.Run("ServiceAccountTokenThroughTokenReview", func(t *testing.T) {
		token := statsServiceAccountToken(t, env)
		sa := newKubeletClient(t, nil, token)
		sa.expect(t, "GET", "/stats/summary", http.StatusOK, `"nodeName":"`+nodeName+`"`)
		sa.expect(t, "GET", "/pods", http.StatusForbidden, "user=system:serviceaccount:default:stats-reader")
		newKubeletClient(t, nil, "not-a-token").expect(t, "GET", "/pods", http.StatusUnauthorized, "Unauthorized")
	})
	t.Run("APIServerClientIsAccepted", func(t *testing.T) {
		apiserver.expect(t, "GET", "/pods", http.StatusOK, `"kind":"PodList"`)
		apiserver.expect(t, "GET", "/healthz", http.StatusOK, "ok")
		apiserver.expect(t, "GET", "/configz", http.StatusOK, `"kubeletconfig"`)
		apiserver.expect(t, "GET", "/runningpods/", http.StatusOK, `"kind":"PodList"`)
		startLoggingPod(t, env)
		apiserver.expect(t, "GET", "/containerLogs/default/auth-logs/main", http.StatusOK, "auth-logs-line")
		statsUser.expect(t, "GET", "/containerLogs/default/auth-logs/main", http.StatusForbidden, "subresource(s)=[proxy]")
	})
	t.Run("KubectlLogsThroughTheAPIServer", func(t *testing.T) {
		out, err := env.cl.Kubectl(ctx, "logs", "auth-logs")
		if err != nil || !strings.Contains(out, "auth-logs-line") {
			t.Errorf("kubectl logs = %q, %v", out, err)
		}
	})
	t.Run("APIServerProxiesToTheNode", func(t *testing.T) {
		// kubectl get --raw .../proxy/pods: the API server dials the node's
		// advertised address and port with its kubelet client certificate.
		var out string
		env.node.waitFor("node proxy answers", func() bool {
			out, err = env.cl.Kubectl(ctx, "get", "--raw", "/api/v1/nodes/"+nodeName+"/proxy/pods")
			return err == nil
		})
		if !strings.Contains(out, `"kind":"PodList"`) {
			t.Errorf("node proxy /pods = %q (last error %v)", out, err)
		}
	})
}

// startLoggingPod runs default/auth-logs, whose container "main" prints
// one line and sleeps, and waits until it runs.
func startLoggingPod(t *testing.T, env *clusterEnv) {
	t.Helper()
	env.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := env.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err := env.admin.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "auth-logs", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "echo auth-logs-line && exec sleep 3600"},
			}},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	env.waitPodRunning(t, "auth-logs")
}

// grantNodesStats lets user (and the stats-reader service account in
// default) get nodes/stats, nothing else.
func grantNodesStats(t *testing.T, env *clusterEnv, user string) {
	t.Helper()
	ctx := context.Background()
	_, err := env.admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-node-stats"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/stats"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	must(t, err)
	_, err = env.admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-node-stats"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "e2e-node-stats"},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user},
			{Kind: rbacv1.ServiceAccountKind, Name: "stats-reader", Namespace: "default"},
		},
	}, metav1.CreateOptions{})
	must(t, err)
}

// statsServiceAccountToken returns a token of the default/stats-reader
// service account.
func statsServiceAccountToken(t *testing.T, env *clusterEnv) string {
	t.Helper()
	ctx := context.Background()
	_, err := env.admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "stats-reader"},
	}, metav1.CreateOptions{})
	must(t, err)
	tr, err := env.admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "stats-reader", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))},
	}, metav1.CreateOptions{})
	must(t, err)
	return tr.Status.Token
}
