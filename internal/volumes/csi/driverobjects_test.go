package csi

import (
	"context"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// csiDriverRequests are the verbs of the requests sent for CSIDriver
// objects.
func (e *mounterEnv) csiDriverRequests() []string {
	var verbs []string
	for _, a := range e.client.Actions() {
		if a.GetResource().Resource == "csidrivers" {
			verbs = append(verbs, a.GetVerb())
		}
	}
	return verbs
}

// TestDriverPolicyFromInformer: the CSIDriver object is read from the
// informer Run runs (one list and one watch, which newMounterEnv waits
// for, as upstream's kubelet; no request per volume, however many are
// set up); an object created, changed or deleted later is seen through
// the watch.
func TestDriverPolicyFromInformer(t *testing.T) {
	e := newMounterEnv(t, nil, csiDriver(func(s *storagev1.CSIDriverSpec) { s.AttachRequired = ptr.To(false) }),
		secret("kube-system", "publish", map[string]string{"publish-key": "p"}))
	ctx := testContext(t)
	for _, uid := range []string{"pod-a", "pod-b"} {
		if _, err := e.m.SetUp(ctx, testPod(uid), testPV()); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.csiDriverRequests(); len(got) != 0 {
		t.Errorf("CSIDriver requests %v for the set-ups, want none", got)
	}
	policy := func(driver string) driverPolicy {
		t.Helper()
		p, err := e.m.driverPolicy(ctx, driver)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return ok(), nil })
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if p := policy(testDriver); !p.Exists || p.AttachRequired {
		t.Errorf("policy %+v, want the object's (attach not required)", p)
	}

	other := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "other.csi"}, Spec: storagev1.CSIDriverSpec{PodInfoOnMount: ptr.To(true)}}
	if p := policy(other.Name); p.Exists || !p.AttachRequired {
		t.Errorf("policy of a driver without an object %+v, want upstream's defaults", p)
	}
	if _, err := e.client.StorageV1().CSIDrivers().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("the created CSIDriver seen", func() bool { return policy(other.Name).PodInfoOnMount })
	other.Spec.PodInfoOnMount = ptr.To(false)
	if _, err := e.client.StorageV1().CSIDrivers().Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("the changed CSIDriver seen", func() bool { return !policy(other.Name).PodInfoOnMount })
	if err := e.client.StorageV1().CSIDrivers().Delete(ctx, other.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("the deleted CSIDriver gone", func() bool { return !policy(other.Name).Exists })
}

// TestDriverPolicyWaitsForSync: before the informer has synced (its
// list not answered yet) a read of a CSIDriver waits, as upstream's
// getCSIDriver waits for the cache sync (it sends no GET instead), here
// until the read's context ends; once synced it answers.
func TestDriverPolicyWaitsForSync(t *testing.T) {
	e := newMounterEnv(t, nil)
	client := fake.NewClientset(csiDriver(nil))
	listed := make(chan struct{})
	client.PrependReactor("list", "csidrivers", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-listed
		return false, nil, nil
	})
	cfg := e.m.cfg
	cfg.Client = client
	m, err := NewMounter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(testContext(t))
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = m.Run(runCtx)
	}()
	defer func() { stop(); <-stopped }()
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	if _, err := m.driverPolicy(ctx, testDriver); err == nil || !strings.Contains(err.Error(), "wait for the CSIDriver informer to sync") {
		t.Errorf("driverPolicy before the sync = %v, want the wait's end", err)
	}
	close(listed)
	p, err := m.driverPolicy(testContext(t), testDriver)
	if err != nil || !p.Exists {
		t.Errorf("driverPolicy after the sync = %+v, %v; want the object's", p, err)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "csidrivers" && a.GetVerb() == "get" {
			t.Errorf("a GET of a CSIDriver was sent")
		}
	}
}
