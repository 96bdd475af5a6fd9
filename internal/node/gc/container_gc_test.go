package gc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// events records node events.
type events struct{ got []string }

func (e *events) NodeEventf(eventType, reason, format string, args ...any) {
	e.got = append(e.got, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

// fakeRuntime lists the fake CRI's pods the way kuberuntime does (by the
// pod UID label) and removes through it.
type fakeRuntime struct{ c *cri.Client }

func (r fakeRuntime) ListPods(ctx context.Context) (map[types.UID]*runtimestate.Pod, error) {
	sbs, err := r.c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return nil, err
	}
	cs, err := r.c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	pods := map[types.UID]*runtimestate.Pod{}
	pod := func(uid string) *runtimestate.Pod {
		if pods[types.UID(uid)] == nil {
			pods[types.UID(uid)] = &runtimestate.Pod{UID: types.UID(uid)}
		}
		return pods[types.UID(uid)]
	}
	for _, s := range sbs.GetItems() {
		st := runtimestate.SandboxNotReady
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			st = runtimestate.SandboxReady
		}
		p := pod(s.GetMetadata().GetUid())
		p.Sandboxes = append(p.Sandboxes, runtimestate.Sandbox{ID: s.GetId(), State: st, CreatedAt: time.Unix(0, s.GetCreatedAt())})
	}
	for _, c := range cs.GetContainers() {
		st := runtimestate.ContainerExited
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			st = runtimestate.ContainerRunning
		}
		p := pod(c.GetLabels()["uid"])
		p.Containers = append(p.Containers, runtimestate.Container{
			ID: c.GetId(), Name: c.GetMetadata().GetName(), SandboxID: c.GetPodSandboxId(), State: st,
			CreatedAt: time.Unix(0, c.GetCreatedAt()), ImageID: c.GetImageId(), ImageRef: c.GetImageRef(),
		})
	}
	return pods, nil
}

func (r fakeRuntime) RemoveContainer(ctx context.Context, c runtimestate.Container) error {
	_, err := r.c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
	return err
}

func (r fakeRuntime) RemoveSandbox(ctx context.Context, id string) error {
	_, err := r.c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

// world is a fake CRI with busybox and helpers to run pods in it.
type world struct {
	clk  *clocktesting.FakeClock
	fake *crifake.Fake
	c    *cri.Client
}

func newWorld(t *testing.T) *world {
	clk := clocktesting.NewFakeClock(t0)
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	return &world{clk: clk, fake: f, c: f.Client(t)}
}

func (w *world) sandbox(t *testing.T, uid string, attempt uint32) string {
	t.Helper()
	resp, err := w.c.Runtime.RunPodSandbox(context.Background(), &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p" + uid, Uid: uid, Namespace: "default", Attempt: attempt},
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.clk.Step(time.Second)
	return resp.GetPodSandboxId()
}

// container runs a container in sandbox sb and, unless running, exits it.
func (w *world) container(t *testing.T, sb, uid, name, image string, attempt uint32, running bool) string {
	t.Helper()
	ctx := context.Background()
	resp, err := w.c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}, Image: &runtimeapi.ImageSpec{Image: image},
			Labels: map[string]string{"uid": uid},
		},
		SandboxConfig: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p" + uid, Uid: uid, Namespace: "default"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetContainerId()
	if _, err := w.c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if !running {
		if err := w.fake.ExitContainer(id, 1, "Error"); err != nil {
			t.Fatal(err)
		}
	}
	w.clk.Step(time.Second)
	return id
}

func TestContainerGCCollect(t *testing.T) {
	w := newWorld(t)
	// Pod a: app ran three times (the last runs); an old stopped sandbox.
	oldSB := w.sandbox(t, "a", 0)
	if _, err := w.c.Runtime.StopPodSandbox(context.Background(), &runtimeapi.StopPodSandboxRequest{PodSandboxId: oldSB}); err != nil {
		t.Fatal(err)
	}
	sb := w.sandbox(t, "a", 1)
	a0 := w.container(t, sb, "a", "app", "busybox:1.36", 0, false)
	a1 := w.container(t, sb, "a", "app", "busybox:1.36", 1, false)
	a2 := w.container(t, sb, "a", "app", "busybox:1.36", 2, true)
	// Pod gone: one dead container in a stopped sandbox.
	goneSB := w.sandbox(t, "gone", 0)
	g0 := w.container(t, goneSB, "gone", "app", "busybox:1.36", 0, false)
	if _, err := w.c.Runtime.StopPodSandbox(context.Background(), &runtimeapi.StopPodSandboxRequest{PodSandboxId: goneSB}); err != nil {
		t.Fatal(err)
	}
	var cleaned []string
	ev := &events{}
	ready := false
	g, err := NewContainerGC(ContainerConfig{
		Runtime: fakeRuntime{w.c},
		CleanLogs: func(_ context.Context, id string) error {
			cleaned = append(cleaned, id)
			return nil
		},
		Policy:           ContainerPolicy{MaxPerPodContainer: 1, MaxContainers: -1},
		SourcesReady:     func() bool { return ready },
		ContentRemovable: func(uid types.UID) bool { return uid == "gone" },
		RuntimeRemovable: func(types.UID) bool { return false },
		Clock:            w.clk, Recorder: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Sources not ready: only what the policy allows, the pod "gone" kept.
	if err := g.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a0}, cleaned); diff != "" {
		t.Errorf("logs cleaned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{a1, a2, g0}, containerIDs(w)); diff != "" {
		t.Errorf("containers left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sb, goneSB}, sandboxIDs(w)); diff != "" {
		t.Errorf("sandboxes left (-want +got):\n%s", diff)
	}
	ready = true
	if err := g.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a1, a2}, containerIDs(w)); diff != "" {
		t.Errorf("containers left once sources are ready (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sb}, sandboxIDs(w)); diff != "" {
		t.Errorf("sandboxes left once sources are ready (-want +got):\n%s", diff)
	}
	if len(ev.got) != 0 {
		t.Errorf("events %q, want none", ev.got)
	}
}

func TestContainerGCRunRecordsFailures(t *testing.T) {
	w := newWorld(t)
	sb := w.sandbox(t, "a", 0)
	w.container(t, sb, "a", "app", "busybox:1.36", 0, false)
	w.container(t, sb, "a", "app", "busybox:1.36", 1, false)
	w.fake.InjectError("RemoveContainer", cri.StatusError(cri.ErrUnavailable, "down"))
	ev := &eventsCh{ch: make(chan string, 4)}
	g, err := NewContainerGC(ContainerConfig{
		Runtime: fakeRuntime{w.c}, CleanLogs: func(context.Context, string) error { return nil },
		Policy: ContainerPolicy{MaxPerPodContainer: 1, MaxContainers: -1}, SourcesReady: func() bool { return true },
		ContentRemovable: func(types.UID) bool { return false }, RuntimeRemovable: func(types.UID) bool { return false },
		Clock: w.clk, Recorder: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	select {
	case got := <-ev.ch:
		if want := "Warning ContainerGCFailed "; len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("event %q, want a ContainerGCFailed warning", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ContainerGCFailed event")
	}
	// The next round, a period later, succeeds.
	for !w.clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	w.clk.Step(ContainerGCPeriod)
	deadline := time.Now().Add(10 * time.Second)
	for len(containerIDs(w)) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("containers %v after the second round", containerIDs(w))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

type eventsCh struct{ ch chan string }

func (e *eventsCh) NodeEventf(eventType, reason, format string, args ...any) {
	e.ch <- eventType + " " + reason + " " + fmt.Sprintf(format, args...)
}

func containerIDs(w *world) []string {
	var out []string
	for _, c := range w.fake.Containers() {
		out = append(out, c.GetId())
	}
	return out
}

func sandboxIDs(w *world) []string {
	var out []string
	for _, s := range w.fake.Sandboxes() {
		out = append(out, s.GetId())
	}
	return out
}

func TestNewContainerGCValidates(t *testing.T) {
	_, err := NewContainerGC(ContainerConfig{})
	if err == nil {
		t.Error("empty config accepted")
	}
}
