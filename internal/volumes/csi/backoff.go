package csi

import (
	"context"
	"fmt"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// apiPollInterval is how often start-up asks for the CSINode until the
// API server answers (upstream's waitForAPIServerForever). upstream_test.go
// pins it and the back-offs.
const apiPollInterval = time.Second

// updateBackoff is upstream's nodeinfomanager updateBackoff: four
// attempts of a Node or CSINode update, 10, 50 and 250 ms apart.
func updateBackoff() wait.Backoff {
	return wait.Backoff{Steps: 4, Duration: 10 * time.Millisecond, Factor: 5.0, Jitter: 0.1}
}

// initBackoff is upstream's back-off of the CSINode's initialization at
// start (initializeCSINode): six attempts over some 140 seconds.
func initBackoff() wait.Backoff {
	return wait.Backoff{Steps: 6, Duration: 30 * time.Millisecond, Factor: 8.0, Jitter: 0.1}
}

// retry calls op as upstream's wait.ExponentialBackoff calls a condition
// that fails on every error: at most b.Steps times, waiting b.Step() on
// clk between attempts, until it succeeds; ctx ending stops it early.
// The error is upstream's shape: "<what>: timed out waiting for the
// condition; caused by: <every attempt's error>".
func retry(ctx context.Context, clk clock.Clock, b wait.Backoff, what string, op func(context.Context) error) error {
	var errs []error
	for {
		err := op(ctx)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if b.Steps <= 1 {
			return fmt.Errorf("%s: timed out waiting for the condition; caused by: %w", what, utilerrors.NewAggregate(errs))
		}
		t := clk.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w; caused by: %w", what, context.Cause(ctx), utilerrors.NewAggregate(errs))
		case <-t.C():
		}
	}
}
