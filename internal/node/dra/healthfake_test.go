package dra

import (
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	drahealthv1 "k8s.io/kubelet/pkg/apis/dra-health/v1"
)

// fakeHealth is a fake driver's DRAResourceHealth server: each stream
// opened sends the reports handed to send, and ends with Unavailable when
// breakStream is called. Safe for concurrent use; mu guards opens.
type fakeHealth struct {
	reports chan *drahealthv1.NodeWatchResourcesResponse
	breaks  chan struct{}
	mu      sync.Mutex
	// opens are the services of the streams opened, in order.
	opens []string
}

func newFakeHealth() *fakeHealth {
	return &fakeHealth{reports: make(chan *drahealthv1.NodeWatchResourcesResponse), breaks: make(chan struct{})}
}

// send hands one report to the open stream (blocking until it is sent).
func (h *fakeHealth) send(devices ...*drahealthv1.DeviceHealth) {
	h.reports <- &drahealthv1.NodeWatchResourcesResponse{Devices: devices}
}

// breakStream ends the open stream with an error.
func (h *fakeHealth) breakStream() { h.breaks <- struct{}{} }

func (h *fakeHealth) Opens() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.opens)
}

// fakeHealthService is the health server as one service version sees it.
type fakeHealthService struct {
	drahealthv1.UnimplementedDRAResourceHealthServer
	h       *fakeHealth
	service string
}

func (s *fakeHealthService) NodeWatchResources(_ *drahealthv1.NodeWatchResourcesRequest, stream drahealthv1.DRAResourceHealth_NodeWatchResourcesServer) error {
	s.h.mu.Lock()
	s.h.opens = append(s.h.opens, s.service)
	s.h.mu.Unlock()
	for {
		select {
		case r := <-s.h.reports:
			if err := stream.Send(r); err != nil {
				return err
			}
		case <-s.h.breaks:
			return status.Error(codes.Unavailable, "health source broke")
		case <-stream.Context().Done():
			return nil
		}
	}
}

// report is one device's report of the fake driver's pool.
func report(device string, h drahealthv1.HealthStatus, msg string, timeoutSeconds int64) *drahealthv1.DeviceHealth {
	return &drahealthv1.DeviceHealth{
		Device: &drahealthv1.DeviceIdentifier{PoolName: testNode, DeviceName: device},
		Health: h, Message: msg, LastUpdatedTime: 1, HealthCheckTimeoutSeconds: timeoutSeconds,
	}
}
