package podfeed

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podsource"
)

const waitTimeout = 10 * time.Second

func pod(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i:1"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// source is one node's API pod source, run until the test ends, and what
// it sends.
type source struct {
	snapshots chan podsource.Snapshot
	changes   chan podsource.Update
}

func startSource(t *testing.T, ctx context.Context, cfg podsource.APIConfig) *source {
	t.Helper()
	cfg.Clock = clock.RealClock{}
	s, err := podsource.NewAPISource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src := &source{snapshots: make(chan podsource.Snapshot, 1), changes: make(chan podsource.Update, 100)}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src.snapshots, src.changes) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return src
}

func (s *source) snapshot(t *testing.T) []string {
	t.Helper()
	select {
	case snap := <-s.snapshots:
		return names(snap.Pods)
	case <-time.After(waitTimeout):
		t.Fatal("no snapshot")
		return nil
	}
}

// next receives n changes, summarized as OP:pod,pod.
func (s *source) next(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		select {
		case u := <-s.changes:
			out = append(out, fmt.Sprintf("%s:%s", u.Op, strings.Join(names(u.Pods), ",")))
		case <-time.After(waitTimeout):
			t.Fatalf("after %v: no change arrived", out)
		}
	}
	return out
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func startFeed(t *testing.T, ctx context.Context, cs *fake.Clientset) *Feed {
	t.Helper()
	f, err := New(Config{Client: cs, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Feed.Run: %v", err)
		}
	})
	return f
}

// TestSameAsAWatchPerNode: a node's API pod source fed by the shared feed
// sends the same snapshot and the same updates, in the same order, as one
// with a list and watch of its own, for the same API changes: adds,
// label and status changes, a deletion timestamp, a removal, and changes
// to another node's pods, which neither sees.
func TestSameAsAWatchPerNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cs := fake.NewClientset(pod("a", "n1"), pod("elsewhere", "n2"), pod("unbound", ""))
	feed := startFeed(t, ctx, cs)
	own := startSource(t, ctx, podsource.APIConfig{Client: cs, NodeName: "n1"})
	shared := startSource(t, ctx, podsource.APIConfig{Feed: feed, NodeName: "n1"})
	for name, s := range map[string]*source{"own watch": own, "shared feed": shared} {
		if got := s.snapshot(t); !cmp.Equal(got, []string{"a"}) {
			t.Errorf("%s: snapshot %v; want [a]", name, got)
		}
	}

	pods := cs.CoreV1().Pods("default")
	must := func(_ *corev1.Pod, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	must(pods.Create(ctx, pod("b", "n1"), metav1.CreateOptions{}))
	must(pods.Create(ctx, pod("far", "n2"), metav1.CreateOptions{}))
	must(pods.Update(ctx, pod("b", "n1", func(p *corev1.Pod) { p.Labels["tier"] = "web" }), metav1.UpdateOptions{}))
	must(pods.Update(ctx, pod("far", "n2", func(p *corev1.Pod) { p.Labels["x"] = "y" }), metav1.UpdateOptions{}))
	must(pods.UpdateStatus(ctx, pod("b", "n1", func(p *corev1.Pod) {
		p.Labels["tier"] = "web"
		p.Status.Phase = corev1.PodRunning
	}), metav1.UpdateOptions{}))
	must(pods.Update(ctx, pod("b", "n1", func(p *corev1.Pod) {
		p.Labels["tier"] = "web"
		p.Status.Phase = corev1.PodRunning
		p.DeletionTimestamp = &now
	}), metav1.UpdateOptions{}))
	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	must(pods.Update(ctx, pod("a", "n1", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" }), metav1.UpdateOptions{}))

	want := []string{"ADD:b", "UPDATE:b", "RECONCILE:b", "DELETE:b", "REMOVE:b", "UPDATE:a"}
	for name, s := range map[string]*source{"own watch": own, "shared feed": shared} {
		if d := cmp.Diff(want, s.next(t, len(want))); d != "" {
			t.Errorf("%s: changes (-want +got):\n%s", name, d)
		}
	}
	if n := feed.Nodes(); n != 1 {
		t.Errorf("%d nodes subscribed; want 1", n)
	}
}

// TestRelistAndSubscriptions: after the shared watch expires and the feed
// lists again, a node's source sends only what changed meanwhile; a node
// that subscribes late gets the pods bound to it before it came; a node
// cannot subscribe twice; a closed subscription is forgotten.
func TestRelistAndSubscriptions(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cs := fake.NewClientset(pod("keep", "n1"), pod("gone", "n1"), pod("run", "n1"), pod("early", "n9"))
	first := watch.NewFake()
	watches := 0
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		watches++
		return watches == 1, first, nil
	})
	feed := startFeed(t, ctx, cs)
	s := startSource(t, ctx, podsource.APIConfig{Feed: feed, NodeName: "n1"})
	if got := s.snapshot(t); !cmp.Equal(got, []string{"gone", "keep", "run"}) {
		t.Fatalf("snapshot %v", got)
	}

	pods := cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, pod("new", "n1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.UpdateStatus(ctx, pod("run", "n1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expired := apierrors.NewResourceExpired("too old resource version")
	first.Error(&expired.ErrStatus)
	if d := cmp.Diff([]string{"REMOVE:gone", "ADD:new", "RECONCILE:run"}, s.next(t, 3)); d != "" {
		t.Errorf("after the relist (-want +got):\n%s", d)
	}

	late := startSource(t, ctx, podsource.APIConfig{Feed: feed, NodeName: "n9"})
	if got := late.snapshot(t); !cmp.Equal(got, []string{"early"}) {
		t.Errorf("late node's snapshot %v; want [early]", got)
	}
	if _, err := feed.Subscribe(ctx, "n1"); err == nil || !strings.Contains(err.Error(), "subscribed already") {
		t.Errorf("second subscription of n1: %v; want refused", err)
	}
	sub, err := feed.Subscribe(ctx, "n5")
	if err != nil {
		t.Fatal(err)
	}
	if ev, ok := sub.Next(ctx); !ok || ev.Op != podsource.FeedReplace || len(ev.Pods) != 0 {
		t.Errorf("n5's first event %+v, %v; want an empty FeedReplace", ev, ok)
	}
	sub.Close()
	if _, ok := sub.Next(ctx); ok {
		t.Error("Next after Close returned an event")
	}
	if n := feed.Nodes(); n != 2 {
		t.Errorf("%d nodes subscribed after n5 closed; want 2 (n1, n9)", n)
	}
}

// TestSubscribeWaitsForTheFirstList: Subscribe gives up with ctx while
// the feed has not listed.
func TestSubscribeWaitsForTheFirstList(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	_, ctx := ktesting.NewTestContext(t)
	feed := startFeed(t, ctx, cs)
	wait, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := feed.Subscribe(wait, "n1"); err == nil {
		t.Error("Subscribe before any list succeeded")
	}
}
