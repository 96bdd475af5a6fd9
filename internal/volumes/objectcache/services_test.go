package objectcache

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

func TestEnvStandalone(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	s, err := New(Config{Node: func() *corev1.Node { return node }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.ConfigMap(ctx, "default", "cm"); err == nil || !strings.Contains(err.Error(), "needs an API server") {
		t.Errorf("ConfigMap error = %v, want one saying an API server is needed", err)
	}
	if _, err := s.Secret(ctx, "default", "s"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("Secret error = %v, want a non-NotFound error", err)
	}
	if svcs, synced := s.Services(); len(svcs) != 0 || !synced {
		t.Errorf("Services = %v, %v; want none, synced", svcs, synced)
	}
	if got := s.NodeAllocatable()[corev1.ResourceCPU]; got.String() != "2" {
		t.Errorf("allocatable cpu = %s", got.String())
	}
}

func TestEnvCluster(t *testing.T) {
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}, Data: map[string]string{"k": "v"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}},
	)
	s, err := New(Config{Client: client, Strategy: "Get", Clock: clock.RealClock{}, Node: func() *corev1.Node { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, synced := s.Services(); synced {
		t.Error("services synced before Run")
	}
	cm, err := s.ConfigMap(ctx, "default", "cm")
	if err != nil || cm.Data["k"] != "v" {
		t.Errorf("ConfigMap = %v, %v", cm, err)
	}
	if _, err := s.Secret(ctx, "default", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("Secret error = %v, want NotFound", err)
	}
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	if !cache.WaitForCacheSync(ctx.Done(), s.services.synced) {
		t.Fatal("services informer did not sync")
	}
	if svcs, synced := s.Services(); !synced || len(svcs) != 1 || svcs[0].Name != "kubernetes" {
		t.Errorf("Services = %v, %v", svcs, synced)
	}
	if s.NodeAllocatable() != nil {
		t.Error("allocatable without a node")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}
