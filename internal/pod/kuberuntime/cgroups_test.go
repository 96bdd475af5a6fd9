package kuberuntime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// fakeCgroups records EnsurePod calls and what the runtime had been asked
// by then.
type fakeCgroups struct {
	e       *env
	err     error
	ensured []string
	// callsBefore are the CRI calls made before the first EnsurePod.
	callsBefore []string
	// resized records ResizePod calls: "widen" or "set", with the CRI
	// calls made before each.
	resized   []string
	resizeErr error
	resizedAt [][]string
	// resizeTakes is how far each ResizePod call moves the clock.
	resizeTakes time.Duration
}

func (f *fakeCgroups) ResizePod(_ context.Context, _, _ *corev1.Pod, widen bool) error {
	step := "set"
	if widen {
		step = "widen"
	}
	f.resized = append(f.resized, step)
	f.resizedAt = append(f.resizedAt, f.e.fake.Calls())
	f.e.clock.Step(f.resizeTakes)
	return f.resizeErr
}

func (f *fakeCgroups) PodCgroupParent(pod *corev1.Pod) (string, error) {
	return "/kubepods/burstable/pod" + string(pod.UID), nil
}

func (f *fakeCgroups) EnsurePod(_ context.Context, pod *corev1.Pod) error {
	if f.ensured == nil {
		f.callsBefore = f.e.fake.Calls()
	}
	f.ensured = append(f.ensured, string(pod.UID))
	return f.err
}

func TestSyncPodEnsuresPodCgroupFirst(t *testing.T) {
	cg := &fakeCgroups{}
	e := newEnv(t, func(c *Config) { c.Cgroups = cg })
	cg.e = e
	e.fake.AddImage("busybox:1.36")
	pod := basePod()
	if f := e.sync(pod); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	if !slices.Equal(cg.ensured, []string{"uid-1"}) {
		t.Errorf("EnsurePod calls = %q, want one for uid-1", cg.ensured)
	}
	if slices.Contains(cg.callsBefore, "RunPodSandbox") || slices.Contains(cg.callsBefore, "CreateContainer") {
		t.Errorf("the pod cgroup was ensured after %q", cg.callsBefore)
	}
	cfg, _, err := e.m.sandboxConfig(context.Background(), pod, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.GetLinux().GetCgroupParent(), "/kubepods/burstable/poduid-1"; got != want {
		t.Errorf("sandbox cgroup_parent = %q, want %q", got, want)
	}
}

func TestSyncPodCgroupFailure(t *testing.T) {
	cg := &fakeCgroups{err: errors.New("no memory controller")}
	e := newEnv(t, func(c *Config) { c.Cgroups = cg })
	cg.e = e
	pod := basePod()
	if _, err := e.apply(pod, e.status(pod), nil, nil); err == nil {
		t.Fatal("Apply succeeded though the pod cgroup could not be made")
	}
	if slices.Contains(e.fake.Calls(), "RunPodSandbox") {
		t.Error("a sandbox was created without its cgroup")
	}
	if evs := e.events.take(); !hasEvent(evs, "Warning FailedCreatePodContainer unable to ensure pod container exists: no memory controller") {
		t.Errorf("events %q lack FailedCreatePodContainer", evs)
	}
}
