package kuberuntime

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestStartPace: n starts at a time in arrival order; a slot frees when
// its start ends or when the hold runs out, whichever is first, and never
// twice; a waiter gives up with its context.
func TestStartPace(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := newStartPace(2, 3*time.Second, clk)
	ctx := context.Background()
	first, _, err := p.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, _, _ := p.acquire(ctx)

	got := make(chan func(), 1)
	go func() {
		done, _, err := p.acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- done
	}()
	waiting := func() bool {
		select {
		case <-got:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}
	if !waiting() {
		t.Fatal("a third start went ahead while two held their slots")
	}
	clk.Step(time.Second)
	first()
	third := <-got
	if third == nil {
		t.Fatal("no slot after the first start ended")
	}

	// The second start hangs: at 3 s its hold frees the slot (the third's
	// runs to 4 s), and its late end does not free another.
	clk.Step(2 * time.Second)
	fourth, _, err := acquireWithin(p, time.Second)
	if err != nil {
		t.Fatalf("the hold did not free the hung start's slot: %v", err)
	}
	second()
	if _, _, err := acquireWithin(p, 100*time.Millisecond); err == nil {
		t.Fatal("a late end freed a slot a second time: three starts hold two slots")
	}
	third()
	fourth()
	if len(p.slots) != 0 {
		t.Errorf("%d slots held after every start ended", len(p.slots))
	}

	var none *startPace
	if done, waited, err := none.acquire(ctx); err != nil || waited != 0 {
		t.Errorf("nil pace: waited %v, err %v", waited, err)
	} else {
		done()
	}
}

// acquireWithin acquires with a context that ends after d.
func acquireWithin(p *startPace, d time.Duration) (func(), time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done, waited, err := p.acquire(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, waited, err
	}
	return done, waited, err
}
