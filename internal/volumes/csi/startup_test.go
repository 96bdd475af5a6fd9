package csi

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

const wantMigrated = "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder," +
	"kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"

func TestInitializeCSINode(t *testing.T) {
	entry := storagev1.CSINodeDriver{Name: testDriver, NodeID: "n1", TopologyKeys: []string{}}
	for _, tc := range []struct {
		name     string
		existing *storagev1.CSINode
		// wantDrivers are the entries the CSINode keeps.
		wantDrivers []storagev1.CSINodeDriver
	}{
		{name: "missing: created", wantDrivers: []storagev1.CSINodeDriver{}},
		{name: "ours without the annotation: annotated, entries kept",
			existing:    &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: testNode, OwnerReferences: ownerRefs(testNodeUID)}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{entry}}},
			wantDrivers: []storagev1.CSINodeDriver{entry}},
		{name: "ours with another list: corrected",
			existing: &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: testNode, OwnerReferences: ownerRefs(testNodeUID),
				Annotations: map[string]string{corev1.MigratedPluginsAnnotationKey: "kubernetes.io/gce-pd"}}},
			wantDrivers: nil},
		{name: "an earlier Node's: deleted and made again",
			existing:    &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: testNode, OwnerReferences: ownerRefs("old-uid")}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{entry}}},
			wantDrivers: []storagev1.CSINodeDriver{}},
		{name: "no owner: deleted and made again",
			existing:    &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: testNode}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{entry}}},
			wantDrivers: []storagev1.CSINodeDriver{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			e := newEnv(t, objs...)
			if err := e.h.InitError(); err == nil || err.Error() != "CSINode is not yet initialized" {
				t.Errorf("InitError before = %v, want upstream's CSINode is not yet initialized", err)
			}
			if err := e.h.InitializeCSINode(testContext(t)); err != nil {
				t.Fatalf("InitializeCSINode: %v", err)
			}
			if err := e.h.InitError(); err != nil {
				t.Errorf("InitError after = %v, want nil", err)
			}
			cs := e.csiNode(t)
			if diff := cmp.Diff(ownerRefs(testNodeUID), cs.OwnerReferences); diff != "" {
				t.Errorf("owner (-want +got):\n%s", diff)
			}
			if got := cs.Annotations[corev1.MigratedPluginsAnnotationKey]; got != wantMigrated {
				t.Errorf("migrated plugins %q, want %q", got, wantMigrated)
			}
			if diff := cmp.Diff(tc.wantDrivers, cs.Spec.Drivers); diff != "" {
				t.Errorf("drivers (-want +got):\n%s", diff)
			}
		})
	}
}

// Until the API server answers, start-up asks again every second; a
// missing Node makes the attempts fail until the retries are spent.
func TestInitializeCSINodeWaitsAndGivesUp(t *testing.T) {
	e := newEnv(t)
	forbidden := 3
	e.client.PrependReactor("get", "csinodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		if forbidden > 0 {
			forbidden--
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, testNode, nil)
		}
		return false, nil, nil
	})
	if err := e.client.CoreV1().Nodes().Delete(testContext(t), testNode, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := e.h.InitializeCSINode(testContext(t))
	if forbidden != 0 {
		t.Errorf("%d forbidden answers left: start-up stopped waiting early", forbidden)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "failed to initialize CSINode after retrying:") {
		t.Fatalf("InitializeCSINode = %v, want the retries spent", err)
	}
	nodeGets := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
			nodeGets++
		}
	}
	// initBackoff's 6 attempts, each updateBackoff's 4.
	if nodeGets != 24 {
		t.Errorf("%d Node GETs, want 6×4", nodeGets)
	}
	if err := e.h.InitError(); err == nil || !strings.HasPrefix(err.Error(), "failed to initialize CSINode: ") {
		t.Errorf("InitError = %v, want the last failure", err)
	}
}

func TestInitializeCSINodeStopsWithContext(t *testing.T) {
	e := newEnv(t)
	e.client.PrependReactor("get", "csinodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("starting")
	})
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	if err := e.h.InitializeCSINode(ctx); err == nil {
		t.Fatal("InitializeCSINode with an ended context: no error")
	}
}

func ownerRefs(uid string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: testNode, UID: types.UID(uid)}}
}

// TryInitializeCSINode makes one attempt: with the Node there it creates
// the CSINode and clears InitError; without it, it fails once and leaves
// InitError as it was.
func TestTryInitializeCSINode(t *testing.T) {
	e := newEnv(t)
	if err := e.h.TryInitializeCSINode(testContext(t)); err != nil {
		t.Fatalf("TryInitializeCSINode with the Node there: %v", err)
	}
	if err := e.h.InitError(); err != nil {
		t.Errorf("InitError after = %v, want nil", err)
	}
	if cs := e.csiNode(t); cs.Annotations[corev1.MigratedPluginsAnnotationKey] != wantMigrated {
		t.Errorf("CSINode %+v, want the migrated plugins annotated", cs.ObjectMeta)
	}

	fresh := newEnv(t)
	if err := fresh.client.CoreV1().Nodes().Delete(testContext(t), testNode, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh.client.ClearActions()
	if err := fresh.h.TryInitializeCSINode(testContext(t)); !apierrors.IsNotFound(err) {
		t.Errorf("TryInitializeCSINode without the Node = %v, want NotFound", err)
	}
	if n := len(fresh.client.Actions()); n != 1 {
		t.Errorf("%d API calls, want the one Node GET (no retries)", n)
	}
	if err := fresh.h.InitError(); err == nil || err.Error() != "CSINode is not yet initialized" {
		t.Errorf("InitError = %v, want it left as it was", err)
	}
}
