package kuberuntime

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pullSlots bounds how many image pulls run at once across all pods, as
// upstream's image pullers do: serializeImagePulls is one slot,
// maxParallelImagePulls N slots, and nil no bound (upstream's parallel
// puller without maxParallelImagePulls). It is the only place the limit
// lives; a channel of capacity N holds one token per running pull.
type pullSlots chan struct{}

// newPullSlots returns the slots for a limit of n pulls; n <= 0 means no
// limit.
func newPullSlots(n int) pullSlots {
	if n <= 0 {
		return nil
	}
	return make(pullSlots, n)
}

// acquire waits for a free slot or the end of ctx. The returned function
// frees the slot.
func (s pullSlots) acquire(ctx context.Context) (func(), error) {
	if s == nil {
		return func() {}, nil
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for an image pull slot: %w", context.Cause(ctx))
	}
}

// limitedPull pulls once a slot is free and returns when the pull itself
// started: the wait for a slot is what upstream's Pulled event reports as
// "including waiting".
func (m *Manager) limitedPull(ctx context.Context, pod *corev1.Pod, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, time.Time, error) {
	release, err := m.pullSlots.acquire(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer release()
	started := m.cfg.Clock.Now()
	resp, err := m.pull(ctx, pod, req)
	return resp, started, err
}
