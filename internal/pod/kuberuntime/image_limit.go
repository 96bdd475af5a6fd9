package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/images/pullrecords"
)

// errPullQPSExceeded is upstream's error for a pull refused by the
// registryPullQPS token bucket: the pull fails at once (ErrImagePull, then
// the image pull back-off), it does not wait for a token.
var errPullQPSExceeded = errors.New("pull QPS exceeded")

// newPullQPS returns the token bucket of registryPullQPS and registryBurst,
// as upstream's throttleImagePulling: nil (no limit) when qps is 0.
func newPullQPS(qps float32, burst int, clk clock.Clock) flowcontrol.RateLimiter {
	if qps == 0 {
		return nil
	}
	return flowcontrol.NewTokenBucketRateLimiterWithClock(qps, burst, clk)
}

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

// limitedPull pulls once a slot is free, if the registryPullQPS bucket has
// a token then (upstream takes the slot, then the token), and returns when
// the pull itself started: the wait for a slot is what upstream's Pulled
// event reports as "including waiting".
//
// watch is called when the pull itself starts; the stop it returns is
// called when the pull ends.
func (m *Manager) limitedPull(ctx context.Context, ring podKeyring, req *runtimeapi.PullImageRequest, watch func(context.Context, time.Time) (stop func())) (pullResult, error) {
	release, err := m.pullSlots.acquire(ctx)
	if err != nil {
		return pullResult{}, err
	}
	defer release()
	if m.pullQPS != nil && !m.pullQPS.TryAccept() {
		return pullResult{}, errPullQPSExceeded
	}
	started := m.cfg.Clock.Now()
	stop := watch(ctx, started)
	resp, used, err := m.pull(ctx, ring, req)
	stop()
	return pullResult{ref: resp.GetImageRef(), secret: used, started: started}, err
}

// pullResult is what a successful pull gives: the image reference, the
// pull secret whose credentials worked (nil for none, or node-wide ones),
// and when the pull itself started.
type pullResult struct {
	ref     string
	secret  *pullrecords.Secret
	started time.Time
}
