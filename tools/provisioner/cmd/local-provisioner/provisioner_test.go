package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

const testNode = "node-a"

func newTestProvisioner(t *testing.T) *localProvisioner {
	t.Helper()
	client := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode, Labels: map[string]string{corev1.LabelHostname: "host-a"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}},
	)
	return &localProvisioner{client: client, node: testNode, root: t.TempDir()}
}

func provisionOptions(mutate func(*controller.ProvisionOptions)) controller.ProvisionOptions {
	opts := controller.ProvisionOptions{
		StorageClass: &storagev1.StorageClass{
			ObjectMeta:    metav1.ObjectMeta{Name: "standard"},
			Provisioner:   DefaultProvisionerName,
			ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain),
		},
		PVName: "pvc-1234",
		PVC: &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Mi")}},
			},
		},
		SelectedNodeName: testNode,
	}
	if mutate != nil {
		mutate(&opts)
	}
	return opts
}

func TestProvision(t *testing.T) {
	p := newTestProvisioner(t)
	pv, state, err := p.Provision(context.Background(), provisionOptions(nil))
	if err != nil || state != controller.ProvisioningFinished {
		t.Fatalf("Provision = %v, %v; want finished, no error", state, err)
	}
	dir := filepath.Join(p.root, "pvc-1234")
	want := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1234"},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Mi")},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"host-a"}}},
			}}}},
		},
	}
	if diff := cmp.Diff(want, pv); diff != "" {
		t.Errorf("PV (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != dirMode {
		t.Errorf("volume directory: %v, %v; want a directory of mode %o", fi, err, dirMode)
	}
	// A retried Provision keeps the directory and what is in it.
	if err := os.WriteFile(filepath.Join(dir, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Provision(context.Background(), provisionOptions(nil)); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Errorf("second Provision lost the data: %v", err)
	}
}

func TestProvisionImmediateIsForItsNode(t *testing.T) {
	p := newTestProvisioner(t)
	pv, _, err := p.Provision(context.Background(), provisionOptions(func(o *controller.ProvisionOptions) {
		o.SelectedNodeName = ""
		o.StorageClass.ReclaimPolicy = nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values; !cmp.Equal(got, []string{"host-a"}) {
		t.Errorf("node affinity values = %v, want [host-a]", got)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("reclaim policy = %q, want Delete (a class without one)", pv.Spec.PersistentVolumeReclaimPolicy)
	}
}

func TestProvisionRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*controller.ProvisionOptions)
		ignored bool
		node    string // the provisioner's node, when not testNode
	}{
		{"another node", func(o *controller.ProvisionOptions) { o.SelectedNodeName = "node-b" }, true, ""},
		{"a selector", func(o *controller.ProvisionOptions) { o.PVC.Spec.Selector = &metav1.LabelSelector{} }, false, ""},
		{"class parameters", func(o *controller.ProvisionOptions) { o.StorageClass.Parameters = map[string]string{"type": "ssd"} }, false, ""},
		{"class mountOptions", func(o *controller.ProvisionOptions) { o.StorageClass.MountOptions = []string{"ro"} }, false, ""},
		{"no storage request", func(o *controller.ProvisionOptions) { o.PVC.Spec.Resources.Requests = nil }, false, ""},
		{"a name that is no directory name", func(o *controller.ProvisionOptions) { o.PVName = ".." }, false, ""},
		{"a name with a slash", func(o *controller.ProvisionOptions) { o.PVName = "a/b" }, false, ""},
		{"a node without a hostname label", func(o *controller.ProvisionOptions) { o.SelectedNodeName = "unlabelled" }, false, "unlabelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProvisioner(t)
			if tc.node != "" {
				p.node = tc.node
			}
			pv, _, err := p.Provision(context.Background(), provisionOptions(tc.mutate))
			if err == nil || pv != nil {
				t.Fatalf("Provision = %v, %v; want an error", pv, err)
			}
			var ignored *controller.IgnoredError
			if got := errors.As(err, &ignored); got != tc.ignored {
				t.Errorf("error %v: ignored = %t, want %t", err, got, tc.ignored)
			}
			if entries, _ := os.ReadDir(p.root); len(entries) != 0 {
				t.Errorf("the root holds %v after a refused claim", entries)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	p := newTestProvisioner(t)
	pv, _, err := p.Provision(context.Background(), provisionOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	dir := pv.Spec.Local.Path
	if err := os.WriteFile(filepath.Join(dir, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(context.Background(), pv); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("volume directory after Delete: %v, want it gone", err)
	}
	if err := p.Delete(context.Background(), pv); err != nil {
		t.Errorf("Delete of a volume already gone: %v", err)
	}
}

func TestDeleteRefusesOtherPaths(t *testing.T) {
	p := newTestProvisioner(t)
	elsewhere := t.TempDir()
	for name, pv := range map[string]*corev1.PersistentVolume{
		"a path outside the root": {ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: elsewhere}}}},
		"another volume's directory": {ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Join(p.root, "pvc-2")}}}},
		"the root itself": {ObjectMeta: metav1.ObjectMeta{Name: ".."},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Dir(p.root)}}}},
		"not a local volume": {ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: elsewhere}}}},
	} {
		if err := p.Delete(context.Background(), pv); err == nil {
			t.Errorf("%s: Delete succeeded, want it refused", name)
		}
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the directory outside the root: %v", err)
	}
	if _, err := os.Stat(p.root); err != nil {
		t.Errorf("the root: %v", err)
	}
}
