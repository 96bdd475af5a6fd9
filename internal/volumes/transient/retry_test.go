package transient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	errFlaky = errors.New("flaky")
	errHard  = errors.New("hard")
)

func isFlaky(err error) bool { return errors.Is(err, errFlaky) }

// script returns an op that answers errs in turn, then nil, and counts
// its calls.
func script(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}
}

// drive steps clk whenever Do waits on it, until done is closed.
func drive(clk *clocktesting.FakeClock, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if clk.HasWaiters() {
			clk.Step(10 * time.Second)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDo(t *testing.T) {
	tests := []struct {
		name      string
		errs      []error
		wantErr   error
		wantCalls int
		wantWaits []time.Duration
	}{
		{name: "success at once", wantCalls: 1},
		{name: "flaky twice then success", errs: []error{errFlaky, errFlaky}, wantCalls: 3,
			wantWaits: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "hard failure is not retried", errs: []error{errHard}, wantErr: errHard, wantCalls: 1},
		{name: "flaky then hard", errs: []error{errFlaky, errHard}, wantErr: errHard, wantCalls: 2,
			wantWaits: []time.Duration{200 * time.Millisecond}},
		{name: "attempts used up", errs: []error{errFlaky, errFlaky, errFlaky, errFlaky, errFlaky, errFlaky, errFlaky},
			wantErr: errFlaky, wantCalls: 6,
			wantWaits: []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			done := make(chan struct{})
			go drive(clk, done)
			calls := 0
			var waits []time.Duration
			err := Do(context.Background(), clk, DefaultPolicy(), isFlaky,
				func(_ error, d time.Duration) { waits = append(waits, d) }, script(&calls, tt.errs...))
			close(done)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Do() = %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("op called %d times, want %d", calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDoStopsWhenContextEnds(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	errc := make(chan error, 1)
	go func() { errc <- Do(ctx, clk, DefaultPolicy(), isFlaky, nil, script(&calls, errFlaky, errFlaky)) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errFlaky) {
		t.Errorf("Do() = %v, want the cancellation and the last error", err)
	}
	if calls != 1 {
		t.Errorf("op called %d times, want 1", calls)
	}
}
