package transient

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// Policy is how an operation is retried: the waits between attempts follow
// Backoff, and at most Attempts attempts are made.
type Policy struct {
	Backoff  wait.Backoff
	Attempts int
}

// DefaultPolicy returns the policy that retries after 200 ms, doubling up to 2 s, six attempts in
// all: at most 5 s of waiting (0.2+0.4+0.8+1.6+2), the order of
// upstream's volume operations (500 ms, doubling) without their
// two-minute tail, which the pod worker's back-off covers.
func DefaultPolicy() Policy {
	return Policy{
		Backoff:  wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 5, Cap: 2 * time.Second},
		Attempts: 6,
	}
}

// Do calls op until it succeeds, returns an error for which transient is
// false, the attempts of p are used up, or ctx ends; the waits are timers
// of clk. It returns op's last error; onRetry, if set, is told about every
// failure that is retried and the wait before the next attempt.
func Do(ctx context.Context, clk clock.Clock, p Policy, transient func(error) bool, onRetry func(err error, wait time.Duration), op func(context.Context) error) error {
	b := p.Backoff // a copy: Step mutates it
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil || attempt >= p.Attempts || !transient(err) {
			return err
		}
		d := b.Step()
		if onRetry != nil {
			onRetry(err, d)
		}
		t := clk.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("stop retrying: %w: last error: %w", context.Cause(ctx), err)
		case <-t.C():
		}
	}
}
