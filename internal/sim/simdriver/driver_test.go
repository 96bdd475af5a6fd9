package simdriver

import (
	"context"
	"testing"
	"time"

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
