package podsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/pod/allocation"
	"github.com/berthk8s/berth/internal/pod/podworker"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
	"github.com/berthk8s/berth/internal/serve/metrics"
)

type resizeEvents struct{ got []string }

func (e *resizeEvents) Eventf(_ *corev1.Pod, kind, reason, format string, args ...any) {
	e.got = append(e.got, kind+" "+reason+": "+fmt.Sprintf(format, args...))
}

func withCPU(gen int64, cpu string) *corev1.Pod {
	p := testPod(corev1.RestartPolicyAlways)
	p.Generation = gen
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return p
}

func runningWeb() *runtimestate.Pod {
	return &runtimestate.Pod{
		UID:       "u1",
		Sandboxes: []runtimestate.Sandbox{{ID: "s1", State: runtimestate.SandboxReady, IPs: []string{"10.88.0.2"}}},
		Containers: []runtimestate.Container{{
			ID: "c1", Name: "web", SandboxID: "s1", State: runtimestate.ContainerRunning, StartedAt: time.Unix(900, 0),
		}},
	}
}

func conditionsOf(st corev1.PodStatus) []string {
	var out []string
	for _, c := range st.Conditions {
		if c.Type == corev1.PodResizeInProgress || c.Type == corev1.PodResizePending {
			out = append(out, fmt.Sprintf("%s/%s/%d", c.Type, c.Reason, c.ObservedGeneration))
		}
	}
	return out
}

// TestSyncPodResize: a pod runs with its allocation; an admitted resize
// is planned, applied and recorded, the pod is synced again at once and
// that sync clears PodResizeInProgress with ResizeCompleted; a failed
// resize leaves the condition with reason Error and a ResizeError event.
func TestSyncPodResize(t *testing.T) {
	f := newFixture(t)
	ev := &resizeEvents{}
	var current *corev1.Pod
	alloc, err := allocation.NewManager(allocation.Config{
		Allocated: allocation.NewMemoryStore(), Actuated: allocation.NewMemoryStore(),
		Clock: clocktesting.NewFakeClock(time.Unix(1000, 0)),
		Pods:  func() []*corev1.Pod { return []*corev1.Pod{current} },
		Admit: func(context.Context, *corev1.Pod, []*corev1.Pod) (bool, string, string) { return true, "", "" },
		Sync:  func(context.Context, *corev1.Pod) {}, Recorder: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	var reinspected []types.UID
	f.s.cfg.Allocation, f.s.cfg.Recorder = alloc, ev
	f.s.cfg.Reinspect = func(uid types.UID) { reinspected = append(reinspected, uid) }
	sync := func(pod *corev1.Pod) podworker.SyncOutcome {
		t.Helper()
		current = pod
		res, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, pod, runningWeb())
		if err != nil {
			t.Fatalf("SyncPod: %v", err)
		}
		return res.Outcome
	}
	status := func() corev1.PodStatus {
		st, _ := f.store.Get("u1")
		return st
	}

	v1 := withCPU(1, "100m")
	alloc.Admitted(f.ctx, v1)
	if got := sync(v1); got != podworker.SyncSteady || len(f.rt.plan.Resize.Containers) != 0 {
		t.Fatalf("first sync = %v, resize %+v; want steady, nothing", got, f.rt.plan.Resize)
	}

	// The API asks for 200m: admitted; the sync before it saw 100m.
	v2 := withCPU(2, "200m")
	current = v2
	alloc.Resize(f.ctx, v1, v2)
	if got := sync(v2); got != podworker.SyncAgain {
		t.Errorf("sync applying the resize = %v, want again at once", got)
	}
	if len(f.rt.plan.Resize.Containers) != 1 || !f.rt.plan.Resize.PodCgroup {
		t.Errorf("plan resize = %+v, want web in place and the pod cgroup", f.rt.plan.Resize)
	}
	if len(reinspected) != 1 {
		t.Errorf("reinspections after the resize = %v, want the pod once (its status comes from the runtime)", reinspected)
	}
	if got := conditionsOf(status()); fmt.Sprint(got) != "[PodResizeInProgress//2]" {
		t.Errorf("conditions while resizing = %v", got)
	}
	a, _ := alloc.Actuated(types.UID("u1"))
	if web := a.ContainerResources["web"]; web.Requests.Cpu().Cmp(resource.MustParse("200m")) != 0 {
		t.Errorf("actuated after the apply = %v, want 200m", a.ContainerResources["web"])
	}
	if got := sync(v2); got != podworker.SyncSteady || len(conditionsOf(status())) != 0 {
		t.Errorf("next sync = %v with conditions %v; want steady, none", got, conditionsOf(status()))
	}
	if last := ev.got[len(ev.got)-1]; last[:len("Normal ResizeCompleted: Pod resize completed: ")] != "Normal ResizeCompleted: Pod resize completed: " {
		t.Errorf("last event %q, want ResizeCompleted", last)
	}
	if q := status().ContainerStatuses[0].AllocatedResources[corev1.ResourceCPU]; q.String() != "200m" {
		t.Errorf("allocatedResources cpu = %s, want 200m", q.String())
	}

	// A resize the runtime refuses.
	v3 := withCPU(3, "300m")
	current = v3
	alloc.Resize(f.ctx, v2, v3)
	f.rt.resizeErr = errors.New("update resources of container \"web\": boom")
	if got := sync(v3); got != podworker.SyncSteady {
		t.Errorf("failed resize sync = %v, want steady", got)
	}
	if got := conditionsOf(status()); fmt.Sprint(got) != "[PodResizeInProgress/Error/3]" {
		t.Errorf("conditions after a failed resize = %v", got)
	}
	if last := ev.got[len(ev.got)-1]; last[:len("Warning ResizeError: Pod resize error: ")] != "Warning ResizeError: Pod resize error: " {
		t.Errorf("last event %q, want ResizeError", last)
	}
}

// TestTerminalPodDropsResizeConditions: once a pod's status is terminal
// its resize conditions go (upstream's determinePodResizeStatus), so the
// pending and in-progress gauges stop counting it and its Deferred
// resize is resolved as terminated.
func TestTerminalPodDropsResizeConditions(t *testing.T) {
	f := newFixture(t)
	mt, err := metrics.New(metrics.Config{NodeName: "node", Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	pod := withCPU(1, "100m")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	current := pod
	alloc, err := allocation.NewManager(allocation.Config{
		Allocated: allocation.NewMemoryStore(), Actuated: allocation.NewMemoryStore(),
		Clock: clocktesting.NewFakeClock(time.Unix(1000, 0)),
		Pods:  func() []*corev1.Pod { return []*corev1.Pod{current} },
		Admit: func(context.Context, *corev1.Pod, []*corev1.Pod) (bool, string, string) {
			return false, "OutOfcpu", "Node didn't have enough resource: cpu"
		},
		Sync: func(context.Context, *corev1.Pod) {}, Recorder: &resizeEvents{}, Metrics: mt,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.s.cfg.Allocation = alloc
	alloc.Admitted(f.ctx, pod)
	alloc.SetInProgress(pod.UID, "", "", 1)
	bigger := withCPU(2, "300m")
	bigger.Spec.RestartPolicy = corev1.RestartPolicyNever
	current = bigger
	alloc.Resize(f.ctx, pod, bigger)
	if got := len(alloc.Conditions(pod.UID)); got != 2 {
		t.Fatalf("conditions before the pod ended = %d, want PodResizePending and PodResizeInProgress", got)
	}
	const before = `
# HELP kubelet_pod_in_progress_resizes [ALPHA] Number of in-progress resizes for pods.
# TYPE kubelet_pod_in_progress_resizes gauge
kubelet_pod_in_progress_resizes 1
`
	if err := testutil.GatherAndCompare(mt.Registry(), strings.NewReader(before), "kubelet_pod_in_progress_resizes"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(mt.Registry(), "kubelet_pod_pending_resizes"); err != nil || n != 1 {
		t.Errorf("pending resize series = %d, %v; want 1", n, err)
	}

	if _, err := f.s.SyncPod(f.ctx, podworker.SyncPodSync, bigger, exited(0)); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.store.Get(pod.UID); !podutil.IsTerminal(st.Phase) {
		t.Fatalf("phase = %s, want terminal", st.Phase)
	}
	if got := alloc.Conditions(pod.UID); len(got) != 0 {
		t.Errorf("conditions of a terminal pod = %v, want none", got)
	}
	if err := testutil.GatherAndCompare(mt.Registry(), strings.NewReader(strings.Replace(before, "resizes 1", "resizes 0", 1)), "kubelet_pod_in_progress_resizes"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(mt.Registry(), "kubelet_pod_pending_resizes"); err != nil || n != 0 {
		t.Errorf("pending resize series = %d, %v; want none", n, err)
	}
	if got := deferredResolved(t, mt.Registry()); fmt.Sprint(got) != "map[terminated/normal:1]" {
		t.Errorf("deferred resizes resolved = %v, want one terminated", got)
	}
}

// deferredResolved counts the observations of
// kubelet_pod_deferred_resize_duration_seconds by resolution and
// priority bucket.
func deferredResolved(t *testing.T, reg prometheus.Gatherer) map[string]uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "kubelet_pod_deferred_resize_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["resolution"]+"/"+labels["priority_bucket"]] += m.GetHistogram().GetSampleCount()
		}
	}
	return out
}
