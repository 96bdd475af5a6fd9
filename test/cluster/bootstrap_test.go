package cluster

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestBootstrapManifest decodes the objects and checks them against what
// kubeadm creates for node TLS bootstrap.
func TestBootstrapManifest(t *testing.T) {
	tok, err := newBootstrapToken()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(tok.String()) {
		t.Fatalf("token %q is not a bootstrap token", tok)
	}
	docs := strings.Split(BootstrapManifest(tok), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d objects, want a Secret and 3 bindings", len(docs))
	}
	var secret corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &secret); err != nil {
		t.Fatal(err)
	}
	wantData := map[string][]byte{
		"token-id": []byte(tok.ID), "token-secret": []byte(tok.Secret),
		"usage-bootstrap-authentication": []byte("true"), "usage-bootstrap-signing": []byte("true"),
		"auth-extra-groups": []byte(BootstrapGroup),
	}
	if secret.Name != "bootstrap-token-"+tok.ID || secret.Namespace != "kube-system" || secret.Type != corev1.SecretTypeBootstrapToken {
		t.Errorf("secret %s/%s of type %s", secret.Namespace, secret.Name, secret.Type)
	}
	if diff := cmp.Diff(wantData, secret.Data); diff != "" {
		t.Errorf("secret data (-want +got):\n%s", diff)
	}
	type grant struct{ Group, Role string }
	var got []grant
	for _, d := range docs[1:] {
		var b rbacv1.ClusterRoleBinding
		if err := yaml.UnmarshalStrict([]byte(d), &b); err != nil {
			t.Fatal(err)
		}
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.GroupKind || b.RoleRef.Kind != "ClusterRole" {
			t.Fatalf("binding %s: %+v", b.Name, b)
		}
		got = append(got, grant{b.Subjects[0].Name, b.RoleRef.Name})
	}
	want := []grant{
		{BootstrapGroup, "system:node-bootstrapper"},
		{BootstrapGroup, "system:certificates.k8s.io:certificatesigningrequests:nodeclient"},
		{"system:nodes", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}
