package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestStorageManifest decodes the objects: the provisioner's role, bound
// to its certificate user, and a default StorageClass naming it that binds
// WaitForFirstConsumer and deletes its volumes.
func TestStorageManifest(t *testing.T) {
	docs := strings.Split(StorageManifest(), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d objects, want a role, its binding and a StorageClass", len(docs))
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	var class storagev1.StorageClass
	for i, obj := range []any{&role, &binding, &class} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), obj); err != nil {
			t.Fatal(err)
		}
	}
	granted := map[string][]string{}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			granted[r.APIGroups[0]+"/"+res] = r.Verbs
		}
	}
	for _, g := range []struct{ resource, verb string }{
		{"/persistentvolumes", "create"}, {"/persistentvolumes", "delete"}, {"/persistentvolumeclaims", "update"},
		{"storage.k8s.io/storageclasses", "watch"}, {"/events", "create"}, {"/nodes", "get"},
	} {
		if !slices.Contains(granted[g.resource], g.verb) {
			t.Errorf("the role does not grant %s on %s: %v", g.verb, g.resource, granted)
		}
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 ||
		binding.Subjects[0] != (rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: ProvisionerUser}) {
		t.Errorf("binding %+v, want role %s to user %s", binding, role.Name, ProvisionerUser)
	}
	want := storagev1.StorageClass{
		TypeMeta:          class.TypeMeta,
		ObjectMeta:        class.ObjectMeta,
		Provisioner:       ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if diff := cmp.Diff(want, class); diff != "" {
		t.Errorf("StorageClass (-want +got):\n%s", diff)
	}
	if class.Name != DefaultStorageClass || class.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Errorf("StorageClass %s, annotations %v: want %s, the default", class.Name, class.Annotations, DefaultStorageClass)
	}
}

func TestProvisionerArgs(t *testing.T) {
	l := Layout{Dir: "/c", Ports: Ports{Provisioner: 11}}
	want := []string{
		"--kubeconfig=/c/local-provisioner.kubeconfig",
		"--node-name=n1",
		"--root=/c/volumes",
		"--provisioner-name=" + ProvisionerName,
		"--healthz-address=127.0.0.1:11",
		"-v=2",
	}
	if diff := cmp.Diff(want, ProvisionerArgs(l, "n1")); diff != "" {
		t.Errorf("ProvisionerArgs (-want +got):\n%s", diff)
	}
}
