package podsync

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/allocation"
	"github.com/berthk8s/berth/internal/podworker"
	"github.com/berthk8s/berth/internal/runtimestate"
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
	alloc.Resize(f.ctx, v2)
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
	alloc.Resize(f.ctx, v3)
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
