package podsource

import (
	"context"
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

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

const apiNode = "node1"

// apiPod is a pod as the API server gives it: bound to apiNode, no
// annotations of berth's.
func apiPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			Labels:      map[string]string{"app": name},
			Annotations: map[string]string{"team": "a"},
		},
		Spec: corev1.PodSpec{NodeName: apiNode, Containers: []corev1.Container{{Name: "c", Image: "i:1"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestClassifyPod(t *testing.T) {
	now := metav1.NewTime(testNow)
	tests := []struct {
		name    string
		old     *corev1.Pod
		pod     *corev1.Pod
		want    Op
		changed bool
	}{
		{"new pod", nil, apiPod("a"), OpAdd, true},
		{"nothing berth acts on", apiPod("a"), apiPod("a", func(p *corev1.Pod) {
			p.ResourceVersion, p.Finalizers = "7", []string{"x"}
		}), 0, false},
		{"image", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" }), OpUpdate, true},
		{"labels", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.Labels["tier"] = "web" }), OpUpdate, true},
		{"annotation", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.Annotations["team"] = "b" }), OpUpdate, true},
		{"berth's own annotation", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.Annotations[podutil.ConfigSeenAnnotation] = "x" }), 0, false},
		{"deletion timestamp", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.DeletionTimestamp = &now }), OpDelete, true},
		{"status only", apiPod("a"), apiPod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), OpReconcile, true},
		{"spec and status", apiPod("a"), apiPod("a", func(p *corev1.Pod) {
			p.Spec.ActiveDeadlineSeconds = new(int64)
			p.Status.Phase = corev1.PodRunning
		}), OpUpdate, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, changed := classifyPod(tt.old, tt.pod)
			if op != tt.want || changed != tt.changed {
				t.Errorf("classifyPod = %v, %v; want %v, %v", op, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestDiffAPIList(t *testing.T) {
	now := metav1.NewTime(testNow)
	set := func(pods ...*corev1.Pod) podSet {
		s := podSet{}
		for _, p := range pods {
			s[p.UID] = p
		}
		return s
	}
	tests := []struct {
		name string
		old  podSet
		list []*corev1.Pod
		want []string
	}{
		{"same list sends nothing", set(apiPod("a"), apiPod("b")), []*corev1.Pod{apiPod("b"), apiPod("a")}, nil},
		{"empty to empty", set(), nil, nil},
		{"every kind, in the merger's order", set(apiPod("keep"), apiPod("gone2"), apiPod("gone1"), apiPod("img"), apiPod("del"), apiPod("run")),
			[]*corev1.Pod{
				apiPod("keep"), apiPod("new"),
				apiPod("img", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" }),
				apiPod("del", func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
				apiPod("run", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }),
			},
			[]string{"REMOVE:gone1,gone2", "ADD:new", "UPDATE:img", "DELETE:del", "RECONCILE:run"}},
		{"recreated under the same name", set(apiPod("a")),
			[]*corev1.Pod{apiPod("a", func(p *corev1.Pod) { p.UID = "uid-a-2" })},
			[]string{"REMOVE:a", "ADD:a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldLen := len(tt.old)
			next, updates := diffAPIList(tt.old, tt.list)
			if d := cmp.Diff(tt.want, summarize(updates)); d != "" {
				t.Errorf("updates (-want +got):\n%s", d)
			}
			if len(next) != len(tt.list) {
				t.Errorf("next has %d pods, want %d", len(next), len(tt.list))
			}
			if len(tt.old) != oldLen {
				t.Error("diffAPIList changed old")
			}
			for _, u := range updates {
				if u.Source != podutil.APISource {
					t.Errorf("update source %q, want %q", u.Source, podutil.APISource)
				}
			}
		})
	}
}

// apiHarness runs an APIWatcher against a fake clientset. The fake does
// not filter by field selector; it records the selectors asked for.
type apiHarness struct {
	cs        *fake.Clientset
	snapshots chan Snapshot
	changes   chan Update
	// selectors gets the field selector of every list and watch.
	selectors chan string
}

func newAPIHarness(t *testing.T, objs ...runtime.Object) *apiHarness {
	t.Helper()
	h := &apiHarness{
		cs: fake.NewClientset(objs...), snapshots: make(chan Snapshot), changes: make(chan Update),
		selectors: make(chan string, 100),
	}
	h.cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		h.selectors <- "list " + a.(k8stesting.ListAction).GetListRestrictions().Fields.String()
		return false, nil, nil
	})
	h.cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		h.selectors <- "watch " + a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.String()
		return false, nil, nil
	})
	return h
}

// start runs the source until the test ends.
func (h *apiHarness) start(t *testing.T, cfg APIConfig) {
	t.Helper()
	cfg.Client, cfg.NodeName = h.cs, apiNode
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	s, err := NewAPISource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Run(ctx, h.snapshots, h.changes) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func (h *apiHarness) snapshot(t *testing.T) Snapshot {
	t.Helper()
	select {
	case s := <-h.snapshots:
		return s
	case <-time.After(waitTimeout):
		t.Fatal("no snapshot arrived")
		return Snapshot{}
	}
}

// expect receives len(want) changes and compares their summaries.
func (h *apiHarness) expect(t *testing.T, want ...string) []Update {
	t.Helper()
	var got []Update
	for range want {
		got = append(got, recvUpdate(t, h.changes))
	}
	if d := cmp.Diff(want, summarize(got)); d != "" {
		t.Fatalf("changes (-want +got):\n%s", d)
	}
	return got
}

func TestAPIWatcherSendsChanges(t *testing.T) {
	ctx := context.Background()
	other := apiPod("elsewhere", func(p *corev1.Pod) { p.Spec.NodeName = "node2" })
	mirror := apiPod("static-node1", func(p *corev1.Pod) {
		p.Annotations = map[string]string{podutil.ConfigMirrorAnnotation: "hash", podutil.ConfigSourceAnnotation: podutil.FileSource}
	})
	h := newAPIHarness(t, apiPod("a"), mirror, other)
	h.start(t, APIConfig{})

	s := h.snapshot(t)
	if s.Source != podutil.APISource {
		t.Errorf("snapshot source %q, want %q", s.Source, podutil.APISource)
	}
	if d := cmp.Diff([]string{"ADD:a,static-node1"}, summarize([]Update{{Op: OpAdd, Pods: s.Pods}})); d != "" {
		t.Errorf("snapshot pods (-want +got):\n%s", d)
	}
	for _, p := range s.Pods {
		if p.Name == mirror.Name {
			if d := cmp.Diff(mirror.Annotations, p.Annotations); d != "" {
				t.Errorf("mirror pod annotations changed by the source (-want +got):\n%s", d)
			}
			if p.UID != mirror.UID {
				t.Errorf("mirror pod UID %q, want %q", p.UID, mirror.UID)
			}
		}
	}

	pods := h.cs.CoreV1().Pods("default")
	mustPod := func(_ *corev1.Pod, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustPod(pods.Create(ctx, apiPod("b"), metav1.CreateOptions{}))
	h.expect(t, "ADD:b")

	mustPod(pods.Create(ctx, apiPod("far", func(p *corev1.Pod) { p.Spec.NodeName = "node2" }), metav1.CreateOptions{}))
	mustPod(pods.Update(ctx, apiPod("b", func(p *corev1.Pod) { p.Labels["tier"] = "web" }), metav1.UpdateOptions{}))
	h.expect(t, "UPDATE:b")

	mustPod(pods.UpdateStatus(ctx, apiPod("b", func(p *corev1.Pod) {
		p.Labels["tier"] = "web"
		p.Status.Phase = corev1.PodRunning
	}), metav1.UpdateOptions{}))
	h.expect(t, "RECONCILE:b")

	deleting := metav1.NewTime(testNow)
	mustPod(pods.Update(ctx, apiPod("b", func(p *corev1.Pod) {
		p.Labels["tier"] = "web"
		p.Status.Phase = corev1.PodRunning
		p.DeletionTimestamp = &deleting
	}), metav1.UpdateOptions{}))
	got := h.expect(t, "DELETE:b")
	if got[0].Pods[0].DeletionTimestamp == nil || got[0].Source != podutil.APISource {
		t.Errorf("DELETE update = %+v, want the pod with its deletionTimestamp from %q", got[0], podutil.APISource)
	}

	if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expect(t, "REMOVE:b")

	// The source keeps its own copies: what the test does to the
	// snapshot's pods does not hide the API's change of a's image.
	for _, p := range s.Pods {
		p.Spec.Containers[0].Image = "i:2"
	}
	// A change to a pod of another node is never seen, so the next change
	// is the one of a.
	mustPod(pods.Update(ctx, apiPod("far", func(p *corev1.Pod) { p.Spec.NodeName = "node2"; p.Labels["x"] = "y" }), metav1.UpdateOptions{}))
	mustPod(pods.Update(ctx, apiPod("a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "i:2" }), metav1.UpdateOptions{}))
	h.expect(t, "UPDATE:a")

	close(h.selectors)
	for sel := range h.selectors {
		if want := "spec.nodeName=" + apiNode; sel != "list "+want && sel != "watch "+want {
			t.Errorf("request with field selector %q, want %q", sel, want)
		}
	}
}

func TestAPIWatcherRelistSendsOnlyTheDifference(t *testing.T) {
	ctx := context.Background()
	h := newAPIHarness(t, apiPod("keep"), apiPod("gone"), apiPod("run"))
	// The first watch is one the test controls; it ends as expired, which
	// makes the reflector list again. Later watches go to the tracker.
	first := watch.NewFake()
	watches := 0
	h.cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		watches++
		return watches == 1, first, nil
	})
	h.start(t, APIConfig{})
	if s := h.snapshot(t); len(s.Pods) != 3 {
		t.Fatalf("snapshot has %d pods, want 3", len(s.Pods))
	}

	pods := h.cs.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, apiPod("new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.UpdateStatus(ctx, apiPod("run", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expired := apierrors.NewResourceExpired("too old resource version")
	first.Error(&expired.ErrStatus)

	h.expect(t, "REMOVE:gone", "ADD:new", "RECONCILE:run")
	// keep was not added again: the next change is the next event.
	if _, err := pods.Create(ctx, apiPod("later"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expect(t, "ADD:later")
}

func TestAPIWatcherEmptyNodeIsSeen(t *testing.T) {
	h := newAPIHarness(t, apiPod("elsewhere", func(p *corev1.Pod) { p.Spec.NodeName = "node2" }))
	synced := make(chan struct{})
	h.start(t, APIConfig{NodeSynced: synced})
	close(synced)
	s := h.snapshot(t)
	if s.Source != podutil.APISource || len(s.Pods) != 0 {
		t.Errorf("snapshot = %+v, want an empty one from %q", s, podutil.APISource)
	}
}

// TestAPIWatcherThroughMerger checks what the merger makes of API pods:
// their own UID and annotations, plus config.source=api and config.seen.
func TestAPIWatcherThroughMerger(t *testing.T) {
	mirror := apiPod("static-node1", func(p *corev1.Pod) {
		p.Annotations = map[string]string{podutil.ConfigMirrorAnnotation: "hash", podutil.ConfigSourceAnnotation: podutil.FileSource}
	})
	h := newAPIHarness(t, mirror)
	m := startMerger(t, podutil.APISource)
	s, err := NewAPISource(APIConfig{Client: h.cs, NodeName: apiNode, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Run(ctx, m.Snapshots(), m.Changes()) }()
	defer func() {
		cancel()
		_ = <-done
	}()

	u := recvUpdate(t, m.Updates())
	if u.Op != OpAdd || len(u.Pods) != 1 {
		t.Fatalf("first update = %v with %d pods, want ADD of 1", u.Op, len(u.Pods))
	}
	got := u.Pods[0]
	if got.UID != mirror.UID || !podutil.IsMirror(got) || podutil.IsStatic(got) {
		t.Errorf("merged pod UID %q mirror %v static %v; want UID %q, a mirror pod, not static", got.UID, podutil.IsMirror(got), podutil.IsStatic(got), mirror.UID)
	}
	if got.Annotations[podutil.ConfigSourceAnnotation] != podutil.APISource || got.Annotations[podutil.ConfigSeenAnnotation] == "" {
		t.Errorf("merged pod annotations %v, want config.source=api and a config.seen", got.Annotations)
	}
	if !m.SourcesReady() {
		t.Error("api source not ready after its snapshot")
	}

	if _, err := h.cs.CoreV1().Pods("default").Create(ctx, apiPod("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := recvUpdate(t, m.Updates()); u.Op != OpAdd || len(u.Pods) != 1 || u.Pods[0].Name != "b" {
		t.Errorf("second update = %v %v, want ADD:b", u.Op, summarize([]Update{u}))
	}
}

func TestNewAPISourceValidates(t *testing.T) {
	if _, err := NewAPISource(APIConfig{NodeName: apiNode}); err == nil {
		t.Error("NewAPISource accepted a config without client")
	}
	if _, err := NewAPISource(APIConfig{Client: fake.NewClientset()}); err == nil {
		t.Error("NewAPISource accepted a config without node name")
	}
}
