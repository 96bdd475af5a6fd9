package crifake

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Version names of the fake runtime.
const (
	RuntimeName    = "fakeruntime"
	RuntimeVersion = "0.1.0"
)

// Version answers as a CRI v1 runtime called "fakeruntime".
func (f *Fake) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       RuntimeName,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: "v1",
	}, nil
}

// Status reports the RuntimeReady and NetworkReady conditions as set by
// SetRuntimeReady and SetNetworkReady, with containerd's reasons.
func (f *Fake) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rt := &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: f.knobs.runtimeReady}
	if !rt.Status {
		rt.Reason, rt.Message = "RuntimeNotReady", "fake runtime is not ready"
	}
	nw := &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Status: f.knobs.networkReady}
	if !nw.Status {
		nw.Reason, nw.Message = "NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized"
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{
		Conditions: []*runtimeapi.RuntimeCondition{rt, nw},
	}, RuntimeHandlers: f.knobs.handlers, Features: f.knobs.features}, nil
}

// RuntimeConfig reports the cgroup driver set by SetCgroupDriver, or
// Unimplemented (as containerd 1.6) when none is set.
func (f *Fake) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.knobs.cgroupDriver == nil {
		return nil, cri.StatusError(cri.ErrUnimplemented, "unknown method RuntimeConfig for service runtime.v1.RuntimeService")
	}
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{
		CgroupDriver: *f.knobs.cgroupDriver,
	}}, nil
}

// UpdateRuntimeConfig takes the pod CIDR of the network config (PodCIDR
// reports it), as a runtime hands it to its CNI plugin.
func (f *Fake) UpdateRuntimeConfig(_ context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.podCIDR = req.GetRuntimeConfig().GetNetworkConfig().GetPodCidr()
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// PodCIDR returns the pod CIDR the last UpdateRuntimeConfig set.
func (f *Fake) PodCIDR() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.knobs.podCIDR
}
