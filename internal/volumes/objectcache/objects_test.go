package objectcache

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
)

func TestGetStrategyReadsEveryTime(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"), secret("sec", "s1"))
	o, err := New(Config{Client: api.client, Strategy: "Get", Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	// No registration needed: every read is a GET.
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("value = %q, want v1", got)
	}
	if _, err := api.client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := cmValue(t, o, "cfg"); got != "v2" {
		t.Errorf("value after update = %q, want v2", got)
	}
	if s, err := o.Secret(ctx, "ns", "sec"); err != nil || string(s.Data["k"]) != "s1" {
		t.Errorf("Secret = %v, %v", s, err)
	}
	if _, err := o.Secret(ctx, "ns", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("Secret of a missing secret = %v, want NotFound", err)
	}
	o.RegisterPod(podUsing("a", []string{"cfg"}, nil))
	o.UnregisterPod(podUsing("a", nil, nil))
	if n := len(api.getCalls()); n != 4 {
		t.Errorf("%d GETs, want 4", n)
	}
}

func TestStandalone(t *testing.T) {
	o, err := New(Config{Strategy: "Get"})
	if err != nil {
		t.Fatal(err)
	}
	o.RegisterPod(podUsing("a", []string{"cfg"}, []string{"sec"}))
	ctx := context.Background()
	if _, err := o.ConfigMap(ctx, "ns", "cfg"); err == nil || err.Error() != `configmap "cfg" needs an API server (berth runs standalone)` {
		t.Errorf("ConfigMap = %v", err)
	}
	if _, err := o.Secret(ctx, "ns", "sec"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("Secret = %v, want an error that is not NotFound", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := o.Run(ctx); err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestNewRejectsUnknownStrategy(t *testing.T) {
	if _, err := New(Config{Client: fake.NewClientset(), Strategy: "Poll", Clock: clock.RealClock{}}); err == nil {
		t.Error("New accepted strategy Poll")
	}
	for _, s := range []string{"", "Watch", "Cache", "Get"} {
		if _, err := New(Config{Client: fake.NewClientset(), Strategy: kubeletconfigv1beta1.ResourceChangeDetectionStrategy(s), Clock: clock.RealClock{}}); err != nil {
			t.Errorf("New(%q) = %v", s, err)
		}
	}
}
