package pleg

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// ErrNoEventStream is what an EventSource returns, wrapped or not, when
// the runtime has no container event stream (the CRI GetContainerEvents
// call answers Unimplemented, as containerd 1.6 does).
var ErrNoEventStream = errors.New("runtime has no container event stream")

// ContainerEventType is the kind of a runtime container event.
type ContainerEventType int

// The CRI's container event types.
const (
	ContainerCreatedEvent ContainerEventType = iota
	ContainerStartedEvent
	ContainerStoppedEvent
	ContainerDeletedEvent
)

// ContainerEvent is one event of the runtime's container event stream,
// reduced to what the PLEG uses: which pod to relist and when the runtime
// saw the change.
type ContainerEvent struct {
	// PodUID is the UID of the event's pod sandbox; empty when the
	// runtime sent no sandbox status (its sandbox was already gone).
	PodUID      types.UID
	ContainerID string
	Type        ContainerEventType
	// Created is when the runtime generated the event, after the change.
	Created time.Time
}

// EventSource is the runtime's container event stream. Implemented by
// internal/pod/kuberuntime over the CRI GetContainerEvents call.
type EventSource interface {
	// WatchContainerEvents calls handle for every event, in order and on
	// the calling goroutine, until ctx ends (it then returns nil or ctx's
	// error) or the stream fails (the error; ErrNoEventStream when the
	// runtime has no stream).
	WatchContainerEvents(ctx context.Context, handle func(ContainerEvent)) error
}

// Reconnection delays of the event stream, doubled after each failure
// that delivered no event.
const (
	DefaultEventRetry = time.Second
	maxEventRetry     = 2 * time.Minute
)

// watchEvents follows the event stream until ctx ends or the runtime
// turns out to have none; each event relists its pod at once. When the
// stream fails it reconnects after a delay (DefaultEventRetry, doubled up to
// maxEventRetry while attempts deliver nothing); the periodic relist, which
// never stops, covers the gap.
func (p *PLEG) watchEvents(ctx context.Context) {
	logger := klog.FromContext(ctx)
	delay := p.eventRetry
	for {
		received := false
		err := p.source.WatchContainerEvents(ctx, func(e ContainerEvent) {
			if !received {
				received = true
				logger.V(2).Info("Container event stream is live; pods are relisted on their events")
			}
			p.handleEvent(ctx, e)
		})
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrNoEventStream) {
			logger.Info("Container runtime has no event stream; relisting every period", "period", p.period)
			return
		}
		if received {
			delay = p.eventRetry
		}
		logger.V(2).Info("Container event stream ended; relisting every period until it reconnects", "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return
		case <-p.clock.After(delay):
		}
		delay = min(2*delay, maxEventRetry)
	}
}

// handleEvent relists the event's pod (RelistPod) unless the cache already
// holds a status of it read after the event was generated: that read saw
// the change. So an event that a relist (periodic or on demand) has
// overtaken costs nothing, and a burst of events for one pod costs one
// relist or a few.
func (p *PLEG) handleEvent(ctx context.Context, e ContainerEvent) {
	logger := klog.FromContext(ctx).WithValues("podUID", e.PodUID, "containerID", e.ContainerID, "type", e.Type)
	if e.PodUID == "" {
		logger.V(4).Info("Container event without a pod sandbox; the relist covers it")
		return
	}
	if p.cache.NewerThan(e.PodUID, e.Created) {
		logger.V(5).Info("Container event already in the cache")
		return
	}
	logger.V(4).Info("Relisting pod on a container event")
	p.RelistPod(ctx, e.PodUID)
}
