package podcidr

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// RuntimeConfigUpdater is the CRI call Update makes (a
// runtimeapi.RuntimeServiceClient has it).
type RuntimeConfigUpdater interface {
	UpdateRuntimeConfig(ctx context.Context, in *runtimeapi.UpdateRuntimeConfigRequest, opts ...grpc.CallOption) (*runtimeapi.UpdateRuntimeConfigResponse, error)
}

// Updater remembers the pod CIDR the runtime last took. Update may be
// called from any goroutine.
type Updater struct {
	runtime RuntimeConfigUpdater
	// mu guards current and serializes the CRI calls, as upstream's
	// updatePodCIDRMux.
	mu      sync.Mutex
	current string
}

// New returns an Updater that knows of no pod CIDR yet.
func New(runtime RuntimeConfigUpdater) *Updater {
	return &Updater{runtime: runtime}
}

// Update is upstream's updatePodCIDR: when cidr (several joined by ",")
// differs from the last one the runtime took, it sends it with
// UpdateRuntimeConfig and remembers it on success; a failed call is
// retried by the next Update. It reports whether cidr differed.
func (u *Updater) Update(ctx context.Context, cidr string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if cidr == u.current {
		return false, nil
	}
	req := &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: &runtimeapi.RuntimeConfig{
		NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: cidr},
	}}
	if _, err := u.runtime.UpdateRuntimeConfig(ctx, req); err != nil {
		return true, fmt.Errorf("update pod CIDR %q: %w", cidr, err)
	}
	klog.FromContext(ctx).Info("Updated pod CIDR", "originalPodCIDR", u.current, "newPodCIDR", cidr)
	u.current = cidr
	return true, nil
}
