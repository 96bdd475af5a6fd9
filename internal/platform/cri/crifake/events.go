package crifake

import (
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventBuffer is how many events an open stream holds before it drops
// them, as containerd's CRI plugin (1000) does.
const eventBuffer = 1000

// eventStreams are the open GetContainerEvents streams. Guarded by Fake.mu.
type eventStreams struct {
	// enabled serves the stream (containerd >= 1.7); off, the call
	// answers Unimplemented, as containerd 1.6.
	enabled bool
	open    map[*eventStream]struct{}
}

// eventStream is one open stream: its events, and ended, closed by
// DropEvents.
type eventStream struct {
	ch    chan *runtimeapi.ContainerEventResponse
	ended chan struct{}
}

// GetContainerEvents streams container events as containerd >= 1.7 does
// (see EnableEvents) until the client goes away or DropEvents ends it;
// otherwise it answers Unimplemented, as containerd 1.6.
func (f *Fake) GetContainerEvents(_ *runtimeapi.GetEventsRequest, srv runtimeapi.RuntimeService_GetContainerEventsServer) error {
	st, err := f.openEvents()
	if err != nil {
		return err
	}
	defer f.closeEvents(st)
	for {
		select {
		case <-srv.Context().Done():
			return nil
		case <-st.ended:
			return status.Error(codes.Unavailable, "container event stream dropped")
		case ev := <-st.ch:
			if err := srv.Send(ev); err != nil {
				return err
			}
		}
	}
}

func (f *Fake) openEvents() (*eventStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.streams.enabled {
		return nil, status.Error(codes.Unimplemented, "method GetContainerEvents not implemented")
	}
	st := &eventStream{ch: make(chan *runtimeapi.ContainerEventResponse, eventBuffer), ended: make(chan struct{})}
	if f.streams.open == nil {
		f.streams.open = map[*eventStream]struct{}{}
	}
	f.streams.open[st] = struct{}{}
	return st, nil
}

// closeEvents forgets st (DropEvents may have already).
func (f *Fake) closeEvents(st *eventStream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.streams.open, st)
}

// emit sends an event about containerID (a container or a sandbox) of
// sandboxID to every open stream, with the sandbox's status (nil if it is
// gone) and the statuses of its containers, as containerd 2 does.
// A full stream drops the event. Callers hold mu.
func (f *Fake) emit(sandboxID, containerID string, typ runtimeapi.ContainerEventType) {
	if len(f.streams.open) == 0 {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{ContainerId: containerID, ContainerEventType: typ, CreatedAt: f.now()}
	if s := f.world.sandboxes[sandboxID]; s != nil {
		ev.PodSandboxStatus = s.status()
	}
	for _, c := range f.world.containers {
		if c.sandboxID == sandboxID {
			ev.ContainersStatuses = append(ev.ContainersStatuses, c.status())
		}
	}
	sort.Slice(ev.ContainersStatuses, func(i, j int) bool {
		return ev.ContainersStatuses[i].GetCreatedAt() < ev.ContainersStatuses[j].GetCreatedAt()
	})
	for st := range f.streams.open {
		select {
		case st.ch <- ev:
		default:
		}
	}
}
