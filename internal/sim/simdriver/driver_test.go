package simdriver

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/pod/prober"
	"github.com/berthk8s/berth/internal/sim/appmodel"
)

// start runs a sandbox with annotations and a container named name in
// it, and returns the container's ID.
func start(t *testing.T, f *crifake.Fake, annotations map[string]string, name string) string {
	t.Helper()
	ctx := context.Background()
	c := f.Client(t)
	sb, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p-" + name, Uid: "u-" + name, Namespace: "default"}, Annotations: annotations,
	}})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.GetPodSandboxId(), Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.GetContainerId()}); err != nil {
		t.Fatal(err)
	}
	return cr.GetContainerId()
}

func state(t *testing.T, f *crifake.Fake, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	for _, c := range f.Containers() {
		if c.GetId() == id {
			return c
		}
	}
	t.Fatalf("no container %s", id)
	return nil
}

// TestStep: a job-like container exits with the model's code at its
// run-for; a growing one uses the model's memory and keeps running.
func TestStep(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	job := start(t, f, map[string]string{appmodel.Prefix + appmodel.KeyRunFor: "10s", appmodel.Prefix + appmodel.KeyExitCode: "3"}, "job")
	grow := start(t, f, map[string]string{appmodel.Prefix + appmodel.KeyMemory: "1Mi", appmodel.Prefix + appmodel.KeyMemoryPerMinute: "6Mi"}, "grow")
	d, err := New(Config{Runtime: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	clk.Step(9 * time.Second)
	d.Step(ctx)
	if s := state(t, f, job); s.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("job at 9s: %v; want running", s.GetState())
	}
	clk.Step(time.Second)
	d.Step(ctx)
	if s := state(t, f, job); s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || s.GetExitCode() != 3 || s.GetReason() != "Error" {
		t.Errorf("job at 10s: %v exit %d %q; want exited 3 Error", s.GetState(), s.GetExitCode(), s.GetReason())
	}
	if s := state(t, f, grow); s.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("grow: %v; want running", s.GetState())
	}
	stats, err := f.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: grow})
	if err != nil {
		t.Fatal(err)
	}
	// 1Mi + 6Mi/min × 10 s = 2Mi.
	if got := stats.GetStats().GetMemory().GetUsageBytes().GetValue(); got != 2<<20 {
		t.Errorf("grow's memory at 10s: %d; want %d", got, 2<<20)
	}
}

// TestProbe: the prober's handler answers from the model by the
// instance's age, and has no verdict on an instance that does not run.
func TestProbe(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	ann := map[string]string{appmodel.Prefix + appmodel.KeyReadyAfter: "5s", appmodel.Prefix + appmodel.KeyLivenessFailAfter: "20s"}
	id := start(t, f, ann, "web")
	d, err := New(Config{Runtime: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	c := &corev1.Container{Name: "web"}
	ask := func(typ prober.ProbeType) bool {
		ok, _, err := d.Probe(context.Background(), typ, pod, c, id)
		if err != nil {
			t.Fatalf("Probe %v: %v", typ, err)
		}
		return ok
	}
	if ask(prober.Readiness) || !ask(prober.Liveness) || !ask(prober.Startup) {
		t.Error("at 0s: want not ready, live, started")
	}
	clk.Step(5 * time.Second)
	if !ask(prober.Readiness) {
		t.Error("at 5s: want ready")
	}
	clk.Step(15 * time.Second)
	if ask(prober.Liveness) {
		t.Error("at 20s: want the liveness failure")
	}
	if err := f.ExitContainer(id, 0, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Probe(context.Background(), prober.Liveness, pod, c, id); err == nil {
		t.Error("Probe of an exited instance gave a verdict")
	}
}

// TestSummary: the node's memory is its capacity less what the running
// containers use, each pod's is its containers', at the figures Step set;
// an exited container no longer counts; use past the capacity leaves
// nothing available, never a wrapped figure.
func TestSummary(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	start(t, f, map[string]string{appmodel.Prefix + appmodel.KeyMemory: "3Mi"}, "steady")
	job := start(t, f, map[string]string{appmodel.Prefix + appmodel.KeyMemory: "1Mi", appmodel.Prefix + appmodel.KeyRunFor: "1m"}, "job")
	start(t, f, map[string]string{appmodel.Prefix + appmodel.KeyMemoryPerMinute: "6Mi"}, "grow")
	d, err := New(Config{Runtime: f, Clock: clk, NodeName: "n1", MemoryCapacity: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	summary := func() (avail, ws uint64, pods map[string]uint64) {
		s, err := d.Summary(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if s.Node.NodeName != "n1" || s.Node.Memory == nil || s.Node.Memory.AvailableBytes == nil {
			t.Fatalf("node stats %+v; want n1's memory", s.Node)
		}
		pods = map[string]uint64{}
		for _, p := range s.Pods {
			if len(p.Containers) != 1 || *p.Containers[0].Memory.WorkingSetBytes != *p.Memory.WorkingSetBytes {
				t.Errorf("pod %s: containers %+v do not add up to %d", p.PodRef.Name, p.Containers, *p.Memory.WorkingSetBytes)
			}
			if p.PodRef.UID != "u-"+p.Containers[0].Name || p.PodRef.Namespace != "default" {
				t.Errorf("pod ref %+v; want the sandbox's", p.PodRef)
			}
			pods[p.PodRef.Name] = *p.Memory.WorkingSetBytes
		}
		return *s.Node.Memory.AvailableBytes, *s.Node.Memory.WorkingSetBytes, pods
	}

	clk.Step(30 * time.Second)
	d.Step(ctx)
	avail, ws, pods := summary()
	want := map[string]uint64{"p-steady": 3 << 20, "p-job": 1 << 20, "p-grow": 3 << 20}
	if ws != 7<<20 || avail != 9<<20 || !cmp.Equal(pods, want) {
		t.Errorf("at 30s: available %d, working set %d, pods %v; want 9Mi, 7Mi, %v", avail, ws, pods, want)
	}
	clk.Step(30 * time.Second)
	d.Step(ctx) // the job exits; grow is at 6Mi
	if s := state(t, f, job); s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("job at 1m: %v; want exited", s.GetState())
	}
	if avail, ws, pods = summary(); ws != 9<<20 || avail != 7<<20 || len(pods) != 2 {
		t.Errorf("at 1m: available %d, working set %d, pods %v; want 7Mi, 9Mi, two pods", avail, ws, pods)
	}
	clk.Step(2 * time.Minute)
	d.Step(ctx) // grow at 18Mi: past the capacity
	if avail, ws, _ = summary(); avail != 0 || ws != 21<<20 {
		t.Errorf("at 3m: available %d, working set %d; want 0, 21Mi", avail, ws)
	}
}
