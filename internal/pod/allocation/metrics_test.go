package allocation

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// series reads the metric name from reg: each series by its labels
// ("k=v,k=v"), with its value, or a histogram's count and sum ("3/45").
func series(t *testing.T, reg prometheus.Gatherer, name string) map[string]string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := strings.Join(labels, ",")
			switch {
			case m.GetHistogram() != nil:
				out[key] = fmt.Sprintf("%d/%g", m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum())
			case m.GetCounter() != nil:
				out[key] = fmt.Sprint(m.GetCounter().GetValue())
			default:
				out[key] = fmt.Sprint(m.GetGauge().GetValue())
			}
		}
	}
	return out
}

func (f *fixture) expect(t *testing.T, name string, want map[string]string) {
	t.Helper()
	if diff := cmp.Diff(want, series(t, f.metrics.Registry(), name)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func withPriority(p *corev1.Pod, prio int32) *corev1.Pod {
	p.Spec.Priority = ptr.To(prio)
	return p
}

// TestResizeMetrics drives a resize admitted at once, one deferred until
// a pod leaves, one reverted while deferred, and updates that ask for no
// resize, and checks every series the manager feeds, as upstream counts
// them: each requested change, the pending and in-progress gauges, the
// deferred resizes accepted (by trigger) and how long they waited (by
// resolution and priority bucket).
func TestResizeMetrics(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1000)
	a, b := podWithCPU("a", "400m", 1), withPriority(podWithCPU("b", "400m", 1), 150000)
	f.admit(a)
	f.admit(b)

	f.update(podWithCPU("a", "500m", 2))
	f.expect(t, "kubelet_container_requested_resizes_total", map[string]string{"operation=increase,requirement=requests,resource=cpu": "1"})
	f.expect(t, "kubelet_pod_in_progress_resizes", map[string]string{"": "1"})
	f.m.ClearInProgress(a.UID)
	f.expect(t, "kubelet_pod_in_progress_resizes", map[string]string{"": "0"})

	// b's resize waits for a to leave: 30 s Deferred, then accepted by
	// the retry a's removal triggers.
	f.update(withPriority(podWithCPU("b", "600m", 2), 150000))
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{"priority_bucket=high,reason=deferred": "1"})
	f.clock.Step(30 * time.Second)
	delete(f.pods, a.UID)
	f.m.Forget(ctx, a.UID)
	<-f.m.retry
	f.m.mu.Lock()
	f.m.retryPending(ctx, triggerPodsRemoved)
	f.m.publish()
	f.m.mu.Unlock()
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{})
	f.expect(t, "kubelet_pod_in_progress_resizes", map[string]string{"": "1"})
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{"retry_trigger=pods_removed": "1"})
	f.expect(t, "kubelet_pod_deferred_resize_duration_seconds", map[string]string{"priority_bucket=high,resolution=accepted": "1/30"})

	// An update that changes no resources is no resize: nothing counted,
	// nothing retried.
	relabelled := withPriority(podWithCPU("b", "600m", 2), 150000)
	relabelled.Labels = map[string]string{"x": "y"}
	f.update(relabelled)

	// Too big, then put back 10 s later: reverted. The requested changes
	// count both ways.
	f.update(withPriority(podWithCPU("b", "2", 3), 150000))
	f.clock.Step(10 * time.Second)
	f.update(withPriority(podWithCPU("b", "600m", 4), 150000))
	f.expect(t, "kubelet_container_requested_resizes_total", map[string]string{
		"operation=increase,requirement=requests,resource=cpu": "3",
		"operation=decrease,requirement=requests,resource=cpu": "1",
	})
	f.expect(t, "kubelet_pod_deferred_resize_duration_seconds", map[string]string{
		"priority_bucket=high,resolution=accepted": "1/30", "priority_bucket=high,resolution=reverted": "1/10",
	})
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{"retry_trigger=pods_removed": "1"})
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{})
}

// TestDeferredAcceptedTriggers: a deferred resize accepted by the retry
// an update of another pod runs counts pod_updated; one a pod new to
// berth (after a restart) runs, pods_added; the periodic retry,
// periodic_retry.
func TestDeferredAcceptedTriggers(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1000)
	a, b, c := podWithCPU("a", "500m", 1), podWithCPU("b", "400m", 1), podWithCPU("c", "100m", 1)
	f.admit(a)
	f.admit(b)
	f.admit(c)
	f.update(podWithCPU("b", "500m", 2)) // 1100m: Deferred
	f.update(podWithCPU("a", "400m", 2)) // a shrinks: both fit
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{"retry_trigger=pod_updated": "1"})

	// After a restart: c's condition comes back Deferred and c, new to
	// berth, with a spec past its allocation.
	c2 := podWithCPU("c", "200m", 2)
	c2.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred}}
	f.m.Backfill(c2)
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{"priority_bucket=normal,reason=deferred": "1"})
	f.capacity = 1100
	f.pods[c.UID] = c2
	f.m.Resize(ctx, nil, c2)
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{"retry_trigger=pod_updated": "1", "retry_trigger=pods_added": "1"})
	f.expect(t, "kubelet_container_requested_resizes_total", map[string]string{
		"operation=increase,requirement=requests,resource=cpu": "1", "operation=decrease,requirement=requests,resource=cpu": "1",
	})

	// The periodic retry.
	f.update(podWithCPU("c", "300m", 3)) // 1200m: Deferred
	f.capacity = 2000
	done := make(chan struct{})
	var once sync.Once
	f.m.cfg.Sync = func(context.Context, *corev1.Pod) { once.Do(func() { close(done) }) }
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { f.m.Run(ctx); close(stopped) }()
	for !f.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	f.clock.Step(RetryPeriod)
	<-done
	cancel()
	<-stopped
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{
		"retry_trigger=pod_updated": "1", "retry_trigger=pods_added": "1", "retry_trigger=periodic_retry": "1",
	})
}

func guaranteedCPU(name, cpu string, gen int64) *corev1.Pod {
	p := podWithCPU(name, cpu, gen)
	r := &p.Spec.Containers[0].Resources
	r.Requests[corev1.ResourceMemory] = resource.MustParse("64Mi")
	r.Limits = r.Requests.DeepCopy()
	return p
}

// TestInfeasibleResizeMetrics: a resize the node can never make is
// counted under upstream's reason_detail each time it is tried (each
// resize request), pending as infeasible until the pod ends; an
// infeasible resize never waited Deferred.
func TestInfeasibleResizeMetrics(t *testing.T) {
	f := newFixture(t, 10000)
	f.m.cfg.Node = Node{StaticCPUManager: true}
	g := withPriority(guaranteedCPU("g", "1", 1), -5)
	f.admit(g)
	f.update(withPriority(guaranteedCPU("g", "2", 2), -5))
	if got := reasons(f.m.Conditions(g.UID)); !cmp.Equal(got, []string{"PodResizePending/Infeasible/2"}) {
		t.Errorf("conditions = %v", got)
	}
	relabelled := withPriority(guaranteedCPU("g", "2", 2), -5)
	relabelled.Labels = map[string]string{"x": "y"}
	f.update(relabelled)
	want := `
# HELP kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods.
# TYPE kubelet_pod_infeasible_resizes_total counter
kubelet_pod_infeasible_resizes_total{reason_detail="guaranteed_pod_cpu_manager_static_policy"} 1
`
	if err := testutil.GatherAndCompare(f.metrics.Registry(), strings.NewReader(want), "kubelet_pod_infeasible_resizes_total"); err != nil {
		t.Errorf("after one resize request and an update that is none: %v", err)
	}
	f.update(withPriority(guaranteedCPU("g", "3", 3), -5))
	if err := testutil.GatherAndCompare(f.metrics.Registry(), strings.NewReader(strings.Replace(want, "} 1", "} 2", 1)), "kubelet_pod_infeasible_resizes_total"); err != nil {
		t.Errorf("after a second resize request: %v", err)
	}
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{"priority_bucket=low,reason=infeasible": "1"})

	f.m.Terminated(f.pods[g.UID])
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{})
	f.expect(t, "kubelet_pod_deferred_resize_duration_seconds", map[string]string{})
}

// TestGonePodResolvesDeferredResize: a pod that leaves with its resize
// Deferred resolves it as terminated, in the unknown bucket (the pod is
// gone, as upstream's deletePodStatus finds it), at Forget (told by the
// route by which per-pod state ends, for its worker's end or as
// housekeeping's orphan).
func TestGonePodResolvesDeferredResize(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 500)
	a, b := podWithCPU("a", "200m", 1), podWithCPU("b", "200m", 1)
	f.admit(a)
	f.admit(b)
	f.update(podWithCPU("a", "400m", 2))
	f.update(podWithCPU("b", "400m", 2))
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{"priority_bucket=normal,reason=deferred": "2"})
	f.clock.Step(5 * time.Second)
	f.m.Forget(ctx, a.UID)
	f.m.Forget(ctx, b.UID)
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{})
	f.expect(t, "kubelet_pod_deferred_resize_duration_seconds", map[string]string{"priority_bucket=unknown,resolution=terminated": "2/10"})
}

// TestTerminatedLeavesThePendingQueue: a pod whose status turned terminal
// with its resize Deferred is resolved as terminated and no longer
// retried, so no later retry gives it a condition again.
func TestTerminatedLeavesThePendingQueue(t *testing.T) {
	f := newFixture(t, 500)
	a := podWithCPU("a", "200m", 1)
	f.admit(a)
	f.update(podWithCPU("a", "800m", 2))
	f.expect(t, "kubelet_pod_pending_resizes", map[string]string{"priority_bucket=normal,reason=deferred": "1"})
	f.m.Terminated(f.pods[a.UID])
	if slices.Contains(f.m.pending, a.UID) {
		t.Fatalf("pending queue after Terminated: %v, want without %s", f.m.pending, a.UID)
	}
	f.m.mu.Lock()
	f.m.retryPending(context.Background(), triggerPeriodic)
	f.m.mu.Unlock()
	if got := f.m.Conditions(a.UID); len(got) != 0 {
		t.Errorf("conditions after Terminated and a retry: %v, want none", got)
	}
	f.expect(t, "kubelet_pod_deferred_resize_duration_seconds", map[string]string{"priority_bucket=normal,resolution=terminated": "1/0"})
}

// TestReconcileRetriesPendingResizes: a status change alone retries the
// pending resizes, as upstream's HandlePodReconcile, only when a pod
// shows a decrease applied (its requests, status included, shrank:
// pod_resized) or became terminal (pod_terminated).
func TestReconcileRetriesPendingResizes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1000)
	a, b := podWithCPU("a", "500m", 1), podWithCPU("b", "400m", 1)
	f.admit(a)
	f.admit(b)
	f.update(podWithCPU("b", "600m", 2)) // 1100m: Deferred
	f.capacity = 1100                    // room, but nothing says so yet
	// withStatus is a's next status: its container running at cpu, in phase.
	withStatus := func(old *corev1.Pod, cpu string, phase corev1.PodPhase) [2]*corev1.Pod {
		p := old.DeepCopy()
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
		f.pods[p.UID] = p
		return [2]*corev1.Pod{old, p}
	}
	// Running at 700m (a decrease to 500m in progress), then ready: no retry.
	running := withStatus(a, "700m", corev1.PodRunning)
	f.m.Reconciled(ctx, [][2]*corev1.Pod{running, withStatus(running[1], "700m", corev1.PodRunning)})
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{})
	// The decrease applied: a holds 500m, not 700m.
	f.m.Reconciled(ctx, [][2]*corev1.Pod{withStatus(f.pods[a.UID], "500m", corev1.PodRunning)})
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{"retry_trigger=pod_resized": "1"})

	f.update(podWithCPU("b", "700m", 3)) // 1200m: Deferred
	// a ends: the node's pods no longer count it.
	ended := withStatus(f.pods[a.UID], "500m", corev1.PodSucceeded)
	delete(f.pods, a.UID)
	f.m.Reconciled(ctx, [][2]*corev1.Pod{ended})
	f.expect(t, "kubelet_pod_deferred_accepted_resizes_total", map[string]string{
		"retry_trigger=pod_resized": "1", "retry_trigger=pod_terminated": "1"})
}
