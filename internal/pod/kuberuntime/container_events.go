package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/pod/pleg"
)

var _ pleg.EventSource = (*Manager)(nil)

// eventType maps a CRI container event type to the PLEG's; false for one
// berth does not know.
func eventType(t runtimeapi.ContainerEventType) (pleg.ContainerEventType, bool) {
	switch t {
	case runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT:
		return pleg.ContainerCreatedEvent, true
	case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
		return pleg.ContainerStartedEvent, true
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		return pleg.ContainerStoppedEvent, true
	case runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT:
		return pleg.ContainerDeletedEvent, true
	}
	return 0, false
}

// WatchContainerEvents opens the CRI container event stream
// (GetContainerEvents) and hands each event to handle, reduced to its pod
// UID, container ID, type and creation time, until ctx ends (nil) or the
// stream fails. A runtime without the stream (Unimplemented, containerd
// 1.6) yields an error wrapping pleg.ErrNoEventStream; a stream the
// runtime closes, one wrapping io.EOF. Events of types berth does not know
// are skipped.
func (m *Manager) WatchContainerEvents(ctx context.Context, handle func(pleg.ContainerEvent)) error {
	stream, err := m.cfg.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	for err == nil {
		var ev *runtimeapi.ContainerEventResponse
		if ev, err = stream.Recv(); err == nil {
			if e, ok := containerEvent(ev); ok {
				handle(e)
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil
	case errors.Is(err, cri.ErrUnimplemented):
		return fmt.Errorf("get container events: %w: %w", pleg.ErrNoEventStream, err)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("get container events: the runtime closed the stream: %w", err)
	}
	return fmt.Errorf("get container events: %w", err)
}

// containerEvent reduces a CRI event to the PLEG's; false for an unknown
// type. It is pure.
func containerEvent(ev *runtimeapi.ContainerEventResponse) (pleg.ContainerEvent, bool) {
	typ, ok := eventType(ev.GetContainerEventType())
	if !ok {
		return pleg.ContainerEvent{}, false
	}
	return pleg.ContainerEvent{
		PodUID:      types.UID(ev.GetPodSandboxStatus().GetMetadata().GetUid()),
		ContainerID: ev.GetContainerId(),
		Type:        typ,
		Created:     time.Unix(0, ev.GetCreatedAt()),
	}, true
}
