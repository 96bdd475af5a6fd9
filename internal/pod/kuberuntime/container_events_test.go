package kuberuntime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubelettypes "k8s.io/kubelet/pkg/types"

	"github.com/berthk8s/berth/internal/pod/pleg"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// eventually polls cond for up to 5 s of real time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// nextEvent returns the PLEG's next published event, failing after 5 s.
func nextEvent(t *testing.T, p *pleg.PLEG) pleg.Event {
	t.Helper()
	select {
	case ev := <-p.Events():
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no PLEG event within 5 s")
		return pleg.Event{}
	}
}

// barrier runs a bare sandbox of a pod of its own through the runtime and
// returns the PLEG events published until the sandbox's ContainerStarted:
// the events of everything the stream delivered before it, since the PLEG
// handles events in order. What follows the barrier concerns its pod only.
func barrier(t *testing.T, e *env, p *pleg.PLEG, name string) []pleg.Event {
	t.Helper()
	uid := types.UID("barrier-" + name)
	_, err := e.m.cfg.Runtime.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: string(uid)},
		Labels: map[string]string{kubelettypes.KubernetesPodUIDLabel: string(uid),
			kubelettypes.KubernetesPodNameLabel: name, kubelettypes.KubernetesPodNamespaceLabel: "default"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out []pleg.Event
	for {
		ev := nextEvent(t, p)
		if ev.ID == uid {
			return out
		}
		out = append(out, ev)
	}
}

func cachedState(cache *pleg.Cache, uid types.UID, name string) runtimestate.ContainerState {
	pod, _ := cache.Get(uid)
	if c := pod.LatestContainer(name); c != nil {
		return c.State
	}
	return runtimestate.ContainerUnknown
}

// runEventedPLEG runs a PLEG over e's manager, with its event stream, until
// the test ends; it returns once the first relist is done and the stream
// open, with the PLEG, its cache and its count of periodic relists.
func runEventedPLEG(t *testing.T, e *env) (*pleg.PLEG, *pleg.Cache, *atomic.Int32) {
	t.Helper()
	cache := pleg.NewCache()
	relists := &atomic.Int32{}
	p, err := pleg.New(pleg.Config{Runtime: e.m, Cache: cache, Clock: e.clock, Events: e.m,
		Observe: func(pleg.RelistStats) { relists.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})
	eventually(t, "the first relist and the event stream", func() bool { return relists.Load() == 1 && e.fake.EventStreams() == 1 })
	return p, cache, relists
}

// The event-driven PLEG over the CRI fake's event stream: what a sync does
// and a container's own exit reach the cache and the events with no
// periodic relist; a dropped stream falls back to the relist at its
// period, and the stream is reopened.
func TestEventedPLEGOverTheCRIFake(t *testing.T) {
	e := newEnv(t)
	e.fake.AddImage("busybox:1.36")
	e.fake.EnableEvents()
	p, cache, relists := runEventedPLEG(t, e)

	pod := twoContainerPod()
	e.sync(pod)
	got := map[pleg.EventType]int{}
	for _, ev := range barrier(t, e, p, "b1") {
		got[ev.Type]++
	}
	if diff := cmp.Diff(map[pleg.EventType]int{pleg.ContainerStarted: 3}, got); diff != "" {
		t.Errorf("events of the sync, the sandbox and both containers (-want +got):\n%s", diff)
	}
	for _, name := range []string{"app", "side"} {
		if got := cachedState(cache, pod.UID, name); got != runtimestate.ContainerRunning {
			t.Errorf("%s in the cache = %v, want running", name, got)
		}
	}

	rt, _ := cache.Get(pod.UID)
	app, side := rt.LatestContainer("app").ID, rt.LatestContainer("side").ID
	if err := e.fake.ExitContainer(app, 0, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]pleg.Event{{ID: pod.UID, Type: pleg.ContainerDied, Data: app}}, barrier(t, e, p, "b2")); diff != "" {
		t.Errorf("events of the exit (-want +got):\n%s", diff)
	}
	if got := cachedState(cache, pod.UID, "app"); got != runtimestate.ContainerExited {
		t.Errorf("app in the cache = %v after its event, want exited", got)
	}
	if got := relists.Load(); got != 1 {
		t.Errorf("periodic relists = %d, want only the first", got)
	}

	if n := e.fake.DropEvents(); n != 1 {
		t.Fatalf("DropEvents ended %d streams, want 1", n)
	}
	eventually(t, "the stream to close", func() bool { return e.fake.EventStreams() == 0 })
	if err := e.fake.ExitContainer(side, 1, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-p.Events():
		t.Fatalf("event %+v with the stream down and no relist", ev)
	case <-time.After(50 * time.Millisecond):
	}
	e.clock.Step(pleg.DefaultPeriod)
	if ev := nextEvent(t, p); ev != (pleg.Event{ID: pod.UID, Type: pleg.ContainerDied, Data: side}) {
		t.Errorf("event of the periodic relist = %+v, want side's ContainerDied", ev)
	}
	steps := int32(0)
	for e.fake.EventStreams() == 0 { // reopened after DefaultEventRetry
		e.clock.Step(pleg.DefaultEventRetry)
		steps++
		time.Sleep(time.Millisecond)
	}
	// Each step ticked the relist once: wait until they are done.
	before := 2 + steps
	eventually(t, "the relists of the steps", func() bool { return relists.Load() == before })
	if err := e.fake.SetSandboxNotReady(rt.Sandboxes[0].ID); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, p); ev != (pleg.Event{ID: pod.UID, Type: pleg.ContainerDied, Data: rt.Sandboxes[0].ID}) {
		t.Errorf("event after reconnecting = %+v, want the sandbox's ContainerDied", ev)
	}
	if got := relists.Load(); got != before {
		t.Errorf("periodic relists went from %d to %d", before, got)
	}
}

// A runtime without the stream (containerd 1.6, the fake by default)
// yields pleg.ErrNoEventStream at once; an unknown event type is skipped.
func TestWatchContainerEventsWithoutStream(t *testing.T) {
	e := newEnv(t)
	err := e.m.WatchContainerEvents(e.ctx, func(pleg.ContainerEvent) { t.Error("event from a runtime without a stream") })
	if !errors.Is(err, pleg.ErrNoEventStream) {
		t.Errorf("WatchContainerEvents() = %v, want ErrNoEventStream", err)
	}
	if _, ok := containerEvent(&runtimeapi.ContainerEventResponse{ContainerEventType: 42}); ok {
		t.Error("an unknown event type was kept")
	}
}

func TestContainerEvent(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC)
	sandbox := &runtimeapi.PodSandboxStatus{Metadata: &runtimeapi.PodSandboxMetadata{Uid: "uid-1"}}
	tests := []struct {
		name string
		in   *runtimeapi.ContainerEventResponse
		want pleg.ContainerEvent
	}{
		{"created", &runtimeapi.ContainerEventResponse{ContainerId: "c", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, CreatedAt: at.UnixNano(), PodSandboxStatus: sandbox},
			pleg.ContainerEvent{PodUID: "uid-1", ContainerID: "c", Type: pleg.ContainerCreatedEvent, Created: at}},
		{"started", &runtimeapi.ContainerEventResponse{ContainerId: "c", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, CreatedAt: at.UnixNano(), PodSandboxStatus: sandbox},
			pleg.ContainerEvent{PodUID: "uid-1", ContainerID: "c", Type: pleg.ContainerStartedEvent, Created: at}},
		{"stopped", &runtimeapi.ContainerEventResponse{ContainerId: "c", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, CreatedAt: at.UnixNano(), PodSandboxStatus: sandbox},
			pleg.ContainerEvent{PodUID: "uid-1", ContainerID: "c", Type: pleg.ContainerStoppedEvent, Created: at}},
		{"deleted without a sandbox", &runtimeapi.ContainerEventResponse{ContainerId: "c", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, CreatedAt: at.UnixNano()},
			pleg.ContainerEvent{ContainerID: "c", Type: pleg.ContainerDeletedEvent, Created: at}},
	}
	for _, tt := range tests {
		got, ok := containerEvent(tt.in)
		if !ok {
			t.Errorf("%s: dropped", tt.name)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
