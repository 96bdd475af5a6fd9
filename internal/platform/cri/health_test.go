package cri_test

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

func TestHealthVerdictAndFlips(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	fake := crifake.New(clk)
	flips := 0
	h := cri.NewHealth(fake.Client(t), clk, time.Second, func() { flips++ })
	if h.Err() == nil {
		t.Fatal("Err = nil before the first check")
	}
	ctx := context.Background()
	h.Check(ctx)
	if err := h.Err(); err != nil || !h.Info().RuntimeReady {
		t.Fatalf("healthy runtime: Err = %v, Info = %+v", err, h.Info())
	}
	fake.SetRuntimeReady(false)
	h.Check(ctx)
	if err := h.Err(); err == nil || err.Error() != "container runtime is not ready" {
		t.Errorf("runtime not ready: Err = %v", err)
	}
	h.Check(ctx) // no flip
	fake.SetRuntimeReady(true)
	h.Check(ctx)
	if h.Err() != nil {
		t.Errorf("recovered runtime: Err = %v", h.Err())
	}
	// not checked -> healthy is a flip too: the first check, then two.
	if flips != 3 {
		t.Errorf("onChange called %d times, want 3", flips)
	}
}
