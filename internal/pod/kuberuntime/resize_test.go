package kuberuntime

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/serve/metrics"
)

func cpuMem(cpu, mem string) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// TestApplyResize: an in-place resize widens the pod cgroup, updates the
// container through the CRI to the resources it would be created with,
// then sets the pod cgroup; what was applied is reported, and each
// actuation is timed (kubelet_pod_resize_duration_milliseconds), failed
// or not.
func TestApplyResize(t *testing.T) {
	cg := &fakeCgroups{resizeTakes: 20 * time.Millisecond}
	mt, err := metrics.New(metrics.Config{NodeName: "node", Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Cgroups, c.Observe.PodResize = cg, mt.ObservePodResize })
	cg.e = e
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	pod.Spec.Containers[0].Resources = cpuMem("100m", "64Mi")
	res, err := e.apply(pod, e.status(pod), nil, nil)
	if err != nil || len(res.Failures) != 0 {
		t.Fatalf("start: %v %v", err, res.Failures)
	}
	if diff := cmp.Diff(map[string]corev1.ResourceRequirements{"app": cpuMem("100m", "64Mi")}, res.Actuated); diff != "" {
		t.Errorf("actuated at start (-want +got):\n%s", diff)
	}
	app := e.running(pod, "app")
	from := pod.DeepCopy()
	pod.Spec.Containers[0].Resources = cpuMem("200m", "32Mi")

	plan := podplan.Compute(podplan.Inputs{Pod: pod, Runtime: e.status(pod), Now: e.clock.Now(),
		Actuated: map[string]corev1.ResourceRequirements{"app": cpuMem("100m", "64Mi")}})
	if !plan.Resize.PodCgroup || len(plan.Resize.Containers) != 1 {
		t.Fatalf("plan resize = %+v, want the app updated and the pod cgroup", plan.Resize)
	}
	res, err = e.m.Apply(e.ctx, pod, e.status(pod), plan, ApplyOptions{Actuated: from})
	if err != nil || res.ResizeErr != nil {
		t.Fatalf("Apply: %v, resize: %v", err, res.ResizeErr)
	}
	if !slices.Equal(cg.resized, []string{"widen", "set"}) {
		t.Fatalf("ResizePod calls = %q, want widen then set", cg.resized)
	}
	if slices.Contains(cg.resizedAt[0], "UpdateContainerResources") || !slices.Contains(cg.resizedAt[1], "UpdateContainerResources") {
		t.Errorf("the container was not updated between the widening and the setting: %q, %q", cg.resizedAt[0], cg.resizedAt[1])
	}
	st, err := e.fake.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: app.ID})
	if err != nil {
		t.Fatal(err)
	}
	lr := st.GetStatus().GetResources().GetLinux()
	if lr.GetCpuShares() != 204 || lr.GetCpuQuota() != 20000 || lr.GetMemoryLimitInBytes() != 32<<20 {
		t.Errorf("container resources = shares %d quota %d memory %d, want 204, 20000, %d", lr.GetCpuShares(), lr.GetCpuQuota(), lr.GetMemoryLimitInBytes(), 32<<20)
	}
	if !res.PodActuated || !cmp.Equal(res.Actuated, map[string]corev1.ResourceRequirements{"app": cpuMem("200m", "32Mi")}) {
		t.Errorf("result = actuated %v pod %v, want app at 200m/32Mi and the pod", res.Actuated, res.PodActuated)
	}
	// Widening and setting the pod cgroup took 20 ms each.
	if got := resizeDurations(t, mt); !cmp.Equal(got, map[string][2]float64{"true": {1, 40}}) {
		t.Errorf("resize durations = %v, want one success of 40 ms", got)
	}

	// Lowering the memory limit below what the container uses is refused
	// before anything changes.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.fake.SetMemoryUsage(app.ID, 40<<20))
	cg.resized = nil
	res, err = e.m.Apply(e.ctx, pod, e.status(pod), plan, ApplyOptions{Actuated: from})
	want := `cannot decrease memory limits: attempting to set container "app" memory limit (33554432) below current usage (41943040)`
	if err != nil || res.ResizeErr == nil || res.ResizeErr.Error() != want || len(cg.resized) != 0 || len(res.Actuated) != 0 {
		t.Errorf("resize below usage: err %v, resize %v, ResizePod %q, actuated %v; want only %q", err, res.ResizeErr, cg.resized, res.Actuated, want)
	}
	must(e.fake.SetMemoryUsage(app.ID, 0))

	// A failed widening stops the resize: the container keeps its
	// resources, nothing is reported actuated, the error is.
	cg.resized, cg.resizeErr = nil, errors.New("no")
	res, err = e.m.Apply(e.ctx, pod, e.status(pod), plan, ApplyOptions{Actuated: from})
	if err != nil || res.ResizeErr == nil || len(res.Actuated) != 0 || res.PodActuated {
		t.Errorf("failed resize: err %v resize %v actuated %v pod %v, want only ResizeErr", err, res.ResizeErr, res.Actuated, res.PodActuated)
	}
	if !slices.Equal(cg.resized, []string{"widen"}) {
		t.Errorf("ResizePod calls after a failed widening = %q", cg.resized)
	}
	// Two failures: the refused decrease at once, the widening in 20 ms.
	if got := resizeDurations(t, mt); !cmp.Equal(got, map[string][2]float64{"true": {1, 40}, "false": {2, 20}}) {
		t.Errorf("resize durations = %v, want one success of 40 ms and two failures of 20 ms in all", got)
	}
}

// resizeDurations reads kubelet_pod_resize_duration_milliseconds: the
// count and the sum of each success label.
func resizeDurations(t *testing.T, m *metrics.Metrics) map[string][2]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, f := range families {
		if f.GetName() != "kubelet_pod_resize_duration_milliseconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			h := s.GetHistogram()
			out[s.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
		}
	}
	return out
}
