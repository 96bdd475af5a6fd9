package cluster

import (
	"crypto/rand"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestMetricsServerAccessManifest decodes the objects: upstream's roles,
// bound to the certificate user, and an ExternalName Service on loopback.
func TestMetricsServerAccessManifest(t *testing.T) {
	docs := strings.Split(MetricsServerAccessManifest(), "\n---\n")
	if len(docs) != 6 {
		t.Fatalf("%d objects, want 2 roles, 3 bindings and a Service", len(docs))
	}
	var reader, server rbacv1.ClusterRole
	for i, r := range []*rbacv1.ClusterRole{&reader, &server} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), r); err != nil {
			t.Fatal(err)
		}
	}
	wantServer := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
	}
	if diff := cmp.Diff(wantServer, server.Rules); server.Name != "system:metrics-server" || diff != "" {
		t.Errorf("cluster role %s rules (-want +got):\n%s", server.Name, diff)
	}
	if reader.Labels["rbac.authorization.k8s.io/aggregate-to-view"] != "true" || reader.Rules[0].APIGroups[0] != "metrics.k8s.io" {
		t.Errorf("aggregated reader role %+v", reader)
	}
	type grant struct{ Kind, Namespace, Role, User string }
	var got []grant
	for _, d := range docs[2:5] {
		var b rbacv1.RoleBinding // a ClusterRoleBinding decodes into it as well
		if err := yaml.Unmarshal([]byte(d), &b); err != nil {
			t.Fatal(err)
		}
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.UserKind {
			t.Fatalf("binding %s subjects %+v", b.Name, b.Subjects)
		}
		got = append(got, grant{b.RoleRef.Kind, b.Namespace, b.RoleRef.Name, b.Subjects[0].Name})
	}
	want := []grant{
		{"Role", "kube-system", "extension-apiserver-authentication-reader", MetricsServerUser},
		{"ClusterRole", "", "system:auth-delegator", MetricsServerUser},
		{"ClusterRole", "", "system:metrics-server", MetricsServerUser},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict([]byte(docs[5]), &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Namespace+"/"+svc.Name != "kube-system/metrics-server" || svc.Spec.Type != corev1.ServiceTypeExternalName || svc.Spec.ExternalName != "localhost" {
		t.Errorf("service %s/%s: %+v", svc.Namespace, svc.Name, svc.Spec)
	}
}

// apiService is the part of an apiregistration.k8s.io/v1 APIService the
// test reads (berth does not depend on kube-aggregator's types).
type apiService struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Service struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Port      int    `json:"port"`
		} `json:"service"`
		Group                 string `json:"group"`
		Version               string `json:"version"`
		CABundle              []byte `json:"caBundle"`
		InsecureSkipTLSVerify bool   `json:"insecureSkipTLSVerify"`
		GroupPriorityMinimum  int    `json:"groupPriorityMinimum"`
		VersionPriority       int    `json:"versionPriority"`
	} `json:"spec"`
}

func TestMetricsServerAPIService(t *testing.T) {
	var got apiService
	if err := yaml.UnmarshalStrict([]byte(MetricsServerAPIServiceManifest(4443, []byte("CA PEM"))), &got); err != nil {
		t.Fatal(err)
	}
	var want apiService
	want.APIVersion, want.Kind = "apiregistration.k8s.io/v1", "APIService"
	want.Metadata.Name = "v1beta1.metrics.k8s.io"
	want.Spec.Service.Name, want.Spec.Service.Namespace, want.Spec.Service.Port = "metrics-server", "kube-system", 4443
	want.Spec.Group, want.Spec.Version = "metrics.k8s.io", "v1beta1"
	want.Spec.CABundle = []byte("CA PEM")
	want.Spec.GroupPriorityMinimum, want.Spec.VersionPriority = 100, 100
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("APIService (-want +got):\n%s", diff)
	}
}

// TestMetricsServerServingCertificate: the aggregator verifies the
// certificate for the Service's in-cluster name.
func TestMetricsServerServingCertificate(t *testing.T) {
	ca, err := NewCA(rand.Reader, testNow, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(MetricsServerServingSpec())
	if err != nil {
		t.Fatal(err)
	}
	cert := parseCert(t, kp.CertPEM)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.KeyPair().CertPEM)
	for _, name := range []string{"metrics-server.kube-system.svc", "127.0.0.1"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
}
