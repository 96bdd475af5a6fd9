package allocation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/serve/metrics"
)

type event struct{ kind, reason, message string }

type recorder struct{ events []event }

func (r *recorder) Eventf(_ *corev1.Pod, kind, reason, format string, args ...any) {
	r.events = append(r.events, event{kind, reason, fmt.Sprintf(format, args...)})
}

// fixture is a Manager over in-memory stores whose admission fits a
// pod's cpu requests in a node of capacity millicores.
type fixture struct {
	m        *Manager
	pods     map[types.UID]*corev1.Pod
	synced   []string
	rec      *recorder
	clock    *clocktesting.FakeClock
	capacity int64
	metrics  *metrics.Metrics
}

func newFixture(t *testing.T, capacity int64) *fixture {
	f := &fixture{pods: map[types.UID]*corev1.Pod{}, rec: &recorder{}, clock: clocktesting.NewFakeClock(time.Unix(1700000000, 0)), capacity: capacity}
	mt, err := metrics.New(metrics.Config{NodeName: "node", Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.metrics = mt
	m, err := NewManager(Config{
		Allocated: NewMemoryStore(), Actuated: NewMemoryStore(), Clock: f.clock,
		Pods: func() []*corev1.Pod {
			var out []*corev1.Pod
			for _, p := range f.pods {
				out = append(out, p)
			}
			return out
		},
		Admit: func(_ context.Context, pod *corev1.Pod, others []*corev1.Pod) (bool, string, string) {
			used := cpu(pod)
			for _, o := range others {
				used += cpu(o)
			}
			if used > f.capacity {
				return false, "OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: %d, capacity: %d", cpu(pod), used-cpu(pod), f.capacity)
			}
			return true, "", ""
		},
		Sync:     func(_ context.Context, pod *corev1.Pod) { f.synced = append(f.synced, pod.Name) },
		Recorder: f.rec,
		Metrics:  mt,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

func cpu(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		n += c.Resources.Requests.Cpu().MilliValue()
	}
	return n
}

func podWithCPU(name, cpu string, gen int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), Generation: gen},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

// admit admits a new pod as the admitter does.
func (f *fixture) admit(p *corev1.Pod) {
	f.pods[p.UID] = p
	f.m.Admitted(context.Background(), f.m.Allocated(p))
}

// update is a new spec of a known pod, as the sync loop hands it.
func (f *fixture) update(p *corev1.Pod) {
	old := f.pods[p.UID]
	f.pods[p.UID] = p
	f.m.Resize(context.Background(), old, p)
}

func reasons(conds []corev1.PodCondition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s/%s/%d", c.Type, c.Reason, c.ObservedGeneration))
	}
	return out
}

// TestResizeAdmittedDeferredRetried: a resize that fits becomes the
// allocation at once (PodResizeInProgress, ResizeStarted, a sync); one that
// does not is Deferred (PodResizePending, ResizeDeferred) and admitted
// when the pod in the way leaves; one the node can never make is
// Infeasible; a spec put back clears the pending condition.
func TestResizeAdmittedDeferredRetried(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1000)
	a, b := podWithCPU("a", "400m", 1), podWithCPU("b", "400m", 1)
	f.admit(a)
	f.admit(b)

	a2 := podWithCPU("a", "500m", 2)
	f.update(a2)
	if got := f.m.Allocated(a2).Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
		t.Errorf("allocation after a fitting resize = %s, want 500m", got)
	}
	if diff := cmp.Diff([]string{"PodResizeInProgress//2"}, reasons(f.m.Conditions(a.UID))); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(f.rec.events) != 1 || f.rec.events[0].reason != EventResizeStarted || !strings.HasPrefix(f.rec.events[0].message, `Pod resize started: {"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}],"generation":2}`) {
		t.Errorf("events = %+v, want one ResizeStarted with the resources and generation", f.rec.events)
	}
	f.m.ClearInProgress(a.UID)

	b2 := podWithCPU("b", "600m", 2)
	f.update(b2)
	if got := f.m.Allocated(b2).Spec.Containers[0].Resources.Requests.Cpu().String(); got != "400m" {
		t.Errorf("allocation after a deferred resize = %s, want 400m", got)
	}
	if diff := cmp.Diff([]string{"PodResizePending/Deferred/2"}, reasons(f.m.Conditions(b.UID))); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if c := f.m.Conditions(b.UID)[0]; !strings.HasPrefix(c.Message, "Node didn't have enough resource: cpu") {
		t.Errorf("pending message = %q, want the admission's", c.Message)
	}
	last := f.rec.events[len(f.rec.events)-1]
	if last.kind != corev1.EventTypeWarning || last.reason != EventResizeDeferred || !strings.HasPrefix(last.message, "Pod resize Deferred: ") {
		t.Errorf("last event = %+v, want a ResizeDeferred warning", last)
	}

	if held := f.m.HeldPods(); !slices.Contains(held, a.UID) || !slices.Contains(held, b.UID) {
		t.Errorf("HeldPods = %v, want a and b", held)
	}
	// a leaves: the retry admits b's resize.
	delete(f.pods, a.UID)
	f.m.Forget(ctx, a.UID)
	if held := f.m.HeldPods(); slices.Contains(held, a.UID) || !slices.Contains(held, b.UID) {
		t.Errorf("HeldPods after Forget(a) = %v, want b only", held)
	}
	select {
	case <-f.m.retry:
		f.m.mu.Lock()
		f.m.retryPending(ctx, triggerPodsRemoved)
		f.m.mu.Unlock()
	default:
		t.Fatalf("Forget did not ask for a retry")
	}
	if got := f.m.Allocated(b2).Spec.Containers[0].Resources.Requests.Cpu().String(); got != "600m" {
		t.Errorf("allocation after the retry = %s, want 600m", got)
	}
	if diff := cmp.Diff([]string{"PodResizeInProgress//2"}, reasons(f.m.Conditions(b.UID))); diff != "" {
		t.Errorf("conditions after the retry (-want +got):\n%s", diff)
	}

	// Too big for the node now, then put back: the pending condition goes.
	b3 := podWithCPU("b", "2", 3)
	f.update(b3)
	if got := reasons(f.m.Conditions(b.UID)); !cmp.Equal(got, []string{"PodResizePending/Deferred/3", "PodResizeInProgress//2"}) {
		t.Errorf("conditions = %v", got)
	}
	f.update(podWithCPU("b", "600m", 4))
	if got := reasons(f.m.Conditions(b.UID)); !cmp.Equal(got, []string{"PodResizeInProgress//2"}) {
		t.Errorf("conditions after putting the spec back = %v", got)
	}
}

func TestResizeInfeasible(t *testing.T) {
	f := newFixture(t, 1000)
	f.m.cfg.Admit = func(context.Context, *corev1.Pod, []*corev1.Pod) (bool, string, string) {
		return false, corev1.PodReasonInfeasible, msgStaticCPUManager
	}
	a := podWithCPU("a", "400m", 1)
	f.admit(a)
	f.update(podWithCPU("a", "500m", 2))
	if got := reasons(f.m.Conditions(a.UID)); !cmp.Equal(got, []string{"PodResizePending/Infeasible/2"}) {
		t.Errorf("conditions = %v", got)
	}
	if len(f.m.pending) != 0 {
		t.Errorf("an infeasible resize is pending for retries: %v", f.m.pending)
	}
	if last := f.rec.events[len(f.rec.events)-1]; last.reason != EventResizeInfeasible {
		t.Errorf("last event = %+v, want ResizeInfeasible", last)
	}
}

// TestInProgressCondition: upstream's SetPodResizeInProgressCondition
// keeps the generation and the reason of an existing condition.
func TestInProgressCondition(t *testing.T) {
	f := newFixture(t, 1000)
	if _, changed := f.m.SetInProgress("u", "", "", 3); !changed {
		t.Errorf("a new condition is a change")
	}
	f.clock.Step(time.Minute)
	if gen, changed := f.m.SetInProgress("u", "", "", 5); changed || gen != 3 {
		t.Errorf("SetInProgress again = %d, %v; want generation 3, unchanged", gen, changed)
	}
	if gen, changed := f.m.SetInProgress("u", corev1.PodReasonError, "boom", 5); !changed || gen != 3 {
		t.Errorf("SetInProgress with an error = %d, %v; want generation 3, changed", gen, changed)
	}
	got := f.m.Conditions("u")
	want := []corev1.PodCondition{{
		Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, ObservedGeneration: 3,
		Reason: corev1.PodReasonError, Message: "boom",
	}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(corev1.PodCondition{}, "LastProbeTime", "LastTransitionTime")); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if gen, ok := f.m.ClearInProgress("u"); !ok || gen != 3 {
		t.Errorf("ClearInProgress = %d, %v", gen, ok)
	}
	if _, ok := f.m.ClearInProgress("u"); ok {
		t.Errorf("ClearInProgress twice cleared twice")
	}
}

// TestSortPending pins upstream's order: resizes that do not raise
// requests, then priority, then Guaranteed, then the longest pending.
func TestSortPending(t *testing.T) {
	f := newFixture(t, 0)
	mk := func(name, before, after string, prio int32) *corev1.Pod {
		f.admit(podWithCPU(name, before, 1))
		p := podWithCPU(name, after, 2)
		p.Spec.Priority = &prio
		f.pods[p.UID] = p
		return p
	}
	up, down, high := mk("up", "100m", "200m", 0), mk("down", "200m", "100m", 0), mk("high", "100m", "200m", 10)
	pods := []*corev1.Pod{up, high, down}
	f.m.sortPending(pods)
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	if want := []string{"down", "high", "up"}; !cmp.Equal(want, got) {
		t.Errorf("order = %v, want %v", got, want)
	}
}
