package crifake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// eventSummary is what the tests compare of an event: the container (or
// sandbox) it is about, its type, its sandbox's UID and state, and how many
// container statuses it carries.
type eventSummary struct {
	ID, Type, PodUID, Sandbox string
	Containers                int
}

func summarize(ids map[string]string, ev *runtimeapi.ContainerEventResponse) eventSummary {
	s := eventSummary{ID: ids[ev.GetContainerId()], Type: ev.GetContainerEventType().String(), Containers: len(ev.GetContainersStatuses())}
	if sb := ev.GetPodSandboxStatus(); sb != nil {
		s.PodUID, s.Sandbox = sb.GetMetadata().GetUid(), sb.GetState().String()
	}
	return s
}

// The event stream, once enabled, carries every lifecycle step of
// sandboxes and containers with the sandbox's status (none once it is
// removed) and its containers' statuses, as containerd 2 sends them;
// DropEvents ends it with Unavailable, and a new stream can be opened.
func TestContainerEvents(t *testing.T) {
	w := newWorld(t)
	w.f.EnableEvents()
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	stream, err := w.c.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for w.f.EventStreams() != 1 {
		time.Sleep(time.Millisecond)
	}
	sb := w.sandbox(t, "web", false)
	c := w.runningContainer(t, sb, "app")
	if err := w.f.ExitContainer(c, 0, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.Runtime.RemovePodSandbox(w.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{sb: "sandbox", c: "app"}
	want := []eventSummary{
		{"sandbox", "CONTAINER_CREATED_EVENT", "uid-web", "SANDBOX_READY", 0},
		{"sandbox", "CONTAINER_STARTED_EVENT", "uid-web", "SANDBOX_READY", 0},
		{"app", "CONTAINER_CREATED_EVENT", "uid-web", "SANDBOX_READY", 1},
		{"app", "CONTAINER_STARTED_EVENT", "uid-web", "SANDBOX_READY", 1},
		{"app", "CONTAINER_STOPPED_EVENT", "uid-web", "SANDBOX_READY", 1},
		{"sandbox", "CONTAINER_STOPPED_EVENT", "uid-web", "SANDBOX_NOTREADY", 1},
		{"app", "CONTAINER_DELETED_EVENT", "uid-web", "SANDBOX_NOTREADY", 0},
		{"sandbox", "CONTAINER_DELETED_EVENT", "uid-web", "SANDBOX_NOTREADY", 0},
	}
	var got []eventSummary
	for range want {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		got = append(got, summarize(ids, ev))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	if n := w.f.DropEvents(); n != 1 {
		t.Errorf("DropEvents() = %d, want 1", n)
	}
	if _, err := stream.Recv(); !errors.Is(err, cri.ErrUnavailable) {
		t.Errorf("Recv after DropEvents = %v, want Unavailable", err)
	}
	again, err := w.c.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for w.f.EventStreams() != 1 { // the server subscribes after the client returns
		time.Sleep(time.Millisecond)
	}
	w.sandbox(t, "db", true)
	if ev, err := again.Recv(); err != nil || ev.GetPodSandboxStatus().GetMetadata().GetUid() != "uid-db" {
		t.Errorf("reopened stream: %v, %v; want the new sandbox's event", ev, err)
	}
}

// Opening the stream is in the call log, and an injected error refuses it.
func TestContainerEventsInjection(t *testing.T) {
	w := newWorld(t)
	w.f.EnableEvents()
	w.f.InjectError("GetContainerEvents", cri.StatusError(cri.ErrUnavailable, "down"))
	stream, err := w.c.Runtime.GetContainerEvents(w.ctx, &runtimeapi.GetEventsRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if !errors.Is(err, cri.ErrUnavailable) {
		t.Errorf("GetContainerEvents with an injected error = %v", err)
	}
	if diff := cmp.Diff([]string{"GetContainerEvents"}, w.f.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
