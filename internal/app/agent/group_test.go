package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// stopLog records the order in which components return.
type stopLog struct {
	mu    sync.Mutex
	order []string
}

func (l *stopLog) component(name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		l.mu.Lock()
		l.order = append(l.order, name)
		l.mu.Unlock()
		return nil
	}
}

func TestGroupStopsInReverseOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := newGroup(ctx, time.Minute, clock.RealClock{})
	var log stopLog
	for _, name := range []string{"runtime-health", "pleg", "sync-loop", "kubelet-api"} {
		g.Go(name, log.component(name))
	}
	cancel()
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait = %v, want nil after ctx ended", err)
	}
	if diff := cmp.Diff([]string{"kubelet-api", "sync-loop", "pleg", "runtime-health"}, log.order); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
}

func TestGroupFailureStopsTheRestInReverseOrder(t *testing.T) {
	g := newGroup(context.Background(), time.Minute, clock.RealClock{})
	var log stopLog
	g.Go("a", log.component("a"))
	g.Go("b", func(context.Context) error { return errors.New("boom") })
	g.Go("c", log.component("c"))
	err := g.Wait()
	if err == nil || !strings.Contains(err.Error(), "b: boom") {
		t.Fatalf("Wait = %v, want b's failure", err)
	}
	if diff := cmp.Diff([]string{"c", "a"}, log.order); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
}

func TestGroupComponentReturningEarlyIsAFailure(t *testing.T) {
	g := newGroup(context.Background(), time.Minute, clock.RealClock{})
	var log stopLog
	g.Go("a", log.component("a"))
	g.Go("quitter", func(context.Context) error { return nil })
	if err := g.Wait(); err == nil || !strings.Contains(err.Error(), "component quitter stopped unexpectedly") {
		t.Fatalf("Wait = %v, want quitter's unexpected stop", err)
	}
}

// TestGroupStopIsBounded: a component that ignores its context is left
// behind once the stop budget is spent; the components started before it
// are still cancelled.
func TestGroupStopIsBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := testingclock.NewFakeClock(time.Now())
	g := newGroup(ctx, 30*time.Second, clk)
	var log stopLog
	g.Go("first", log.component("first"))
	stuck := make(chan struct{})
	defer close(stuck)
	g.Go("stuck", func(context.Context) error { <-stuck; return nil })
	cancel()
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v before the stop budget was spent", err)
	case <-time.After(50 * time.Millisecond):
	}
	clk.Step(30 * time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait = %v; want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return once the stop budget was spent")
	}
	waitForCond(t, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return len(log.order) == 1 })
}

func waitForCond(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}
