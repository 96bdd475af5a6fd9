package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	g := newGroup(ctx)
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
	g := newGroup(context.Background())
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
	g := newGroup(context.Background())
	var log stopLog
	g.Go("a", log.component("a"))
	g.Go("quitter", func(context.Context) error { return nil })
	if err := g.Wait(); err == nil || !strings.Contains(err.Error(), "component quitter stopped unexpectedly") {
		t.Fatalf("Wait = %v, want quitter's unexpected stop", err)
	}
}
