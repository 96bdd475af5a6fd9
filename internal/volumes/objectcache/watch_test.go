package objectcache

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// startObjects builds Objects over api and runs them until the test ends.
func startObjects(t *testing.T, api *fakeAPI, clk *clocktesting.FakeClock) *Objects {
	t.Helper()
	o, err := New(Config{Client: api.client, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- o.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	return o
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func cmValue(t *testing.T, o *Objects, name string) string {
	t.Helper()
	cm, err := o.ConfigMap(testCtx(t), "ns", name)
	if err != nil {
		t.Fatalf("ConfigMap(%s) = %v", name, err)
	}
	return cm.Data["k"]
}

func TestWatchSeesCreateAndUpdate(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"), configMap("unrelated", "x"))
	o := startObjects(t, api, clocktesting.NewFakeClock(time.Now()))
	ctx := testCtx(t)
	o.RegisterPod(podUsing("a", []string{"cfg"}, []string{"sec"}))

	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("configMap value = %q, want v1", got)
	}
	api.waitOpened(t, "configmaps", "cfg", 1)
	if _, err := api.client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("cfg", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "update served", func() bool { return cmValue(t, o, "cfg") == "v2" })

	if _, err := o.Secret(ctx, "ns", "sec"); !apierrors.IsNotFound(err) {
		t.Errorf("Secret of a missing secret = %v, want NotFound", err)
	}
	api.waitOpened(t, "secrets", "sec", 1)
	if _, err := api.client.CoreV1().Secrets("ns").Create(ctx, secret("sec", "s1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "created secret served", func() bool {
		s, err := o.Secret(ctx, "ns", "sec")
		return err == nil && string(s.Data["k"]) == "s1"
	})
	if _, err := o.ConfigMap(ctx, "ns", "unrelated"); err == nil || apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "not referenced by any registered pod") {
		t.Errorf("ConfigMap of an unreferenced object = %v, want a not-registered error", err)
	}
	if n, m := len(api.watchesOf("configmaps", "ns", "cfg")), len(api.watchesOf("secrets", "ns", "sec")); n != 1 || m != 1 {
		t.Errorf("%d configMap and %d secret watches opened, want one per object", n, m)
	}
}

func TestWatchIsSharedAndStopsAfterLastPod(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"), configMap("other", "o"))
	o := startObjects(t, api, clocktesting.NewFakeClock(time.Now()))
	a, b := podUsing("a", []string{"cfg"}, nil), podUsing("b", []string{"cfg"}, nil)
	o.RegisterPod(a)
	o.RegisterPod(b)
	o.RegisterPod(a) // again: no second reference
	cmValue(t, o, "cfg")
	w := api.waitOpened(t, "configmaps", "cfg", 1)

	o.UnregisterPod(a)
	o.UnregisterPod(a) // idempotent: b's reference stays
	// The informers start and stop in order, in one goroutine: once the
	// watch of "other" is open, a stop of "cfg" would have happened.
	o.RegisterPod(podUsing("c", []string{"other"}, nil))
	api.waitOpened(t, "configmaps", "other", 1)
	if isStopped(w) {
		t.Fatal("watch stopped while pod b still references the configMap")
	}
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("configMap value = %q, want v1", got)
	}

	// b is gone (podgone): Forget drops its references as UnregisterPod does.
	o.Forget(context.Background(), b.UID)
	eventually(t, "watch stopped after the last pod", func() bool { return isStopped(w) })
	if _, err := o.ConfigMap(testCtx(t), "ns", "cfg"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap after the last pod = %v, want a not-registered error", err)
	}
	if n := len(api.watchesOf("configmaps", "ns", "cfg")); n != 1 {
		t.Errorf("%d watches of cfg, want 1", n)
	}

	o.RegisterPod(a)
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("configMap value after registering again = %q, want v1", got)
	}
	api.waitOpened(t, "configmaps", "cfg", 2)
}

func TestWatchFollowsChangedReferences(t *testing.T) {
	api := newFakeAPI(t, configMap("old", "o"), configMap("new", "n"))
	o := startObjects(t, api, clocktesting.NewFakeClock(time.Now()))
	o.RegisterPod(podUsing("a", []string{"old"}, nil))
	cmValue(t, o, "old")
	w := api.waitOpened(t, "configmaps", "old", 1)

	o.RegisterPod(podUsing("a", []string{"new"}, nil))
	if got := cmValue(t, o, "new"); got != "n" {
		t.Errorf("configMap value = %q, want n", got)
	}
	eventually(t, "watch of the dropped reference stopped", func() bool { return isStopped(w) })
}

func TestWatchStopsForImmutableObjects(t *testing.T) {
	cm := configMap("cfg", "v1")
	cm.Immutable = ptr.To(true)
	api := newFakeAPI(t, cm)
	o := startObjects(t, api, clocktesting.NewFakeClock(time.Now()))
	o.RegisterPod(podUsing("a", []string{"cfg"}, nil))
	cmValue(t, o, "cfg")
	w := api.waitOpened(t, "configmaps", "cfg", 1)
	eventually(t, "watch of an immutable object stopped", func() bool { return isStopped(w) })
	if got := cmValue(t, o, "cfg"); got != "v1" {
		t.Errorf("configMap value after the watch stopped = %q, want v1", got)
	}
}

func TestWatchGetWaitsForSyncBounded(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"))
	release := make(chan struct{})
	api.client.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return false, nil, nil
	})
	clk := clocktesting.NewFakeClock(time.Now())
	o := startObjects(t, api, clk)
	t.Cleanup(func() { close(release) }) // runs before Run is stopped
	o.RegisterPod(podUsing("a", []string{"cfg"}, nil))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.ConfigMap(ctx, "ns", "cfg"); !errors.Is(err, context.Canceled) {
		t.Errorf("ConfigMap with a cancelled context = %v, want context.Canceled", err)
	}

	errc := make(chan error)
	go func() { _, err := o.ConfigMap(context.Background(), "ns", "cfg"); errc <- err }()
	eventually(t, "get waits on the clock", clk.HasWaiters)
	clk.Step(syncTimeout)
	err := <-errc
	if !errors.Is(err, ErrNotSynced) || !strings.Contains(err.Error(), `get configmap "ns/cfg": watch not synced within 1s`) {
		t.Errorf("ConfigMap before the first list = %v, want a sync timeout", err)
	}
}

func TestWatchStopsEverythingWhenRunEnds(t *testing.T) {
	api := newFakeAPI(t, configMap("cfg", "v1"))
	o, err := New(Config{Client: api.client, Strategy: "Watch", Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- o.Run(ctx) }()
	o.RegisterPod(podUsing("a", []string{"cfg"}, []string{"sec"}))
	cm := api.waitOpened(t, "configmaps", "cfg", 1)
	sec := api.waitOpened(t, "secrets", "sec", 1)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if !isStopped(cm) || !isStopped(sec) {
		t.Error("Run returned with watches still open")
	}
}
