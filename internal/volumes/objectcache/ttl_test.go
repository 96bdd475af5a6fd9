package objectcache

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestTTL(t *testing.T) {
	annotated := func(v string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.ObjectTTLAnnotationKey: v}}}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want time.Duration
	}{
		{"no node yet", nil, time.Minute},
		{"no annotation", &corev1.Node{}, time.Minute},
		{"annotation in seconds", annotated("15"), 15 * time.Second},
		{"zero: always fetch", annotated("0"), 0},
		{"not a number", annotated("1m"), time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TTL(tc.node); got != tc.want {
				t.Errorf("TTL = %v, want %v", got, tc.want)
			}
		})
	}
}

func newCached(t *testing.T, api *fakeAPI, clk *clocktesting.FakeClock, node *corev1.Node) *Objects {
	t.Helper()
	o, err := New(Config{Client: api.client, Strategy: "Cache", Clock: clk, Node: func() *corev1.Node { return node }})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCacheServesWithinTTL(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"))
	clk := clocktesting.NewFakeClock(time.Now())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.ObjectTTLAnnotationKey: "30"}}}
	o := newCached(t, api, clk, node)
	ctx := testCtx(t)
	if _, err := o.ConfigMap(ctx, "ns", "cfg"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap before registration = %v, want a not-registered error", err)
	}
	o.RegisterPod(podUsing("a", []string{"cfg"}, nil))
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Fatalf("value = %q, want v1", got)
	}
	if _, err := api.client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(29 * time.Second)
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("value within the TTL = %q, want the cached v1", got)
	}
	clk.Step(time.Second)
	if got := cmValue(t, o, "cfg"); got != "v2" {
		t.Errorf("value after the TTL = %q, want v2", got)
	}
	// A refresh of an object already fetched is served from the API
	// server's cache (resourceVersion 0), as upstream.
	if diff := cmp.Diff([]metav1.GetOptions{{}, {ResourceVersion: "0"}}, api.getCalls()); diff != "" {
		t.Errorf("GETs (-want +got):\n%s", diff)
	}

	// A new pod's registration makes the next read fetch again.
	if _, err := api.client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v3"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o.RegisterPod(podUsing("b", []string{"cfg"}, nil))
	if got := cmValue(t, o, "cfg"); got != "v3" {
		t.Errorf("value after a new pod registered = %q, want v3", got)
	}
	o.UnregisterPod(podUsing("a", nil, nil))
	cmValue(t, o, "cfg") // b still references it
	o.UnregisterPod(podUsing("b", nil, nil))
	if _, err := o.ConfigMap(ctx, "ns", "cfg"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after the last pod = %v, want a not-registered error", err)
	}
}

func TestCacheKeepsServingWhenGetFails(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"))
	clk := clocktesting.NewFakeClock(time.Now())
	o := newCached(t, api, clk, nil)
	ctx := testCtx(t)
	o.RegisterPod(podUsing("a", []string{"cfg"}, []string{"gone"}))
	cmValue(t, o, "cfg")

	broken := errors.New("connection refused")
	api.client.PrependReactor("get", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, broken })
	clk.Step(DefaultTTL)
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("value when the refresh fails = %q, want the cached v1", got)
	}
	// With nothing cached, the error is the caller's.
	if _, err := o.Secret(ctx, "ns", "gone"); !errors.Is(err, broken) {
		t.Errorf("Secret with nothing cached = %v, want %v", err, broken)
	}
}

func TestCacheAsksAgainAfterNotFound(t *testing.T) {
	api := newFakeAPI(t)
	clk := clocktesting.NewFakeClock(time.Now())
	o := newCached(t, api, clk, nil)
	ctx := testCtx(t)
	o.RegisterPod(podUsing("a", nil, []string{"sec"}))
	if _, err := o.Secret(ctx, "ns", "sec"); !apierrors.IsNotFound(err) {
		t.Fatalf("Secret = %v, want NotFound", err)
	}
	if _, err := api.client.CoreV1().Secrets("ns").Create(ctx, secret("sec", "s1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := o.Secret(ctx, "ns", "sec")
	if err != nil || string(s.Data["k"]) != "s1" {
		t.Errorf("Secret after creation within the TTL = %v, %v; want it (NotFound is not served from cache)", s, err)
	}
}

func TestOlderThan(t *testing.T) {
	at := func(rv string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	for _, tc := range []struct {
		name        string
		obj, cached runtime.Object
		want        bool
	}{
		{"nothing cached", at("5"), nil, false},
		{"newer", at("10"), at("9"), false},
		{"same", at("9"), at("9"), false},
		{"older: a lagging API server cache", at("8"), at("9"), true},
		{"unparsable versions never count as older", at("x"), at("9"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := olderThan(tc.obj, tc.cached); got != tc.want {
				t.Errorf("olderThan = %v, want %v", got, tc.want)
			}
		})
	}
}
