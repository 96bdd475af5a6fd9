package csi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
)

// retry makes upstream's wait.ExponentialBackoff's attempts, waiting its
// steps on the clock it is given.
func TestRetry(t *testing.T) {
	errFlaky := errors.New("flaky")
	for _, tc := range []struct {
		name      string
		failures  int
		wantCalls int
		wantErr   bool
	}{
		{name: "at once", wantCalls: 1},
		{name: "after three failures", failures: 3, wantCalls: 4},
		{name: "never", failures: 10, wantCalls: 4, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			start := clk.Now()
			var waits []time.Duration
			done := make(chan struct{})
			go func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if clk.HasWaiters() {
						clk.Step(time.Millisecond)
					}
					time.Sleep(50 * time.Microsecond)
				}
			}()
			calls := 0
			last := start
			err := retry(context.Background(), clk, updateBackoff(), "error updating node", func(context.Context) error {
				if calls > 0 {
					waits = append(waits, clk.Since(last))
				}
				last = clk.Now()
				calls++
				if calls <= tc.failures {
					return fmt.Errorf("%w %d", errFlaky, calls)
				}
				return nil
			})
			close(done)
			if calls != tc.wantCalls {
				t.Errorf("%d calls, want %d", calls, tc.wantCalls)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("retry = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, errFlaky) || !strings.HasPrefix(err.Error(), "error updating node: timed out waiting for the condition; caused by: [flaky 1, flaky 2, flaky 3, flaky 4]") {
					t.Errorf("retry = %v, want upstream's shape with every attempt's error", err)
				}
			}
			// 10, 50, 250 ms, each up to 10% longer.
			for i, w := range waits {
				base := 10 * time.Millisecond
				for range i {
					base *= 5
				}
				if w < base || w > base+base/10+time.Millisecond {
					t.Errorf("wait %d: %v, want %v to %v", i, w, base, base+base/10)
				}
			}
		})
	}
}

func TestRetryStopsWithContext(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	ctx, cancel := context.WithCancelCause(context.Background())
	errStop := errors.New("stopping")
	calls := 0
	err := retry(ctx, clk, wait.Backoff{Steps: 10, Duration: time.Second}, "op", func(context.Context) error {
		calls++
		cancel(errStop)
		return errors.New("failed")
	})
	if !errors.Is(err, errStop) || calls != 1 {
		t.Errorf("retry = %v after %d calls, want the context's cause after 1", err, calls)
	}
}
