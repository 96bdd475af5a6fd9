package cri_test

import (
	"context"
	"errors"
	"strings"
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

// TestHealthRuntimeDownAfterMaxWait: a runtime that stops answering Status
// keeps its last verdict and status (the Node stays Ready) until it has not
// answered for MaxWaitForRuntime, as upstream's runtimeState; one that
// never answered is down at once.
func TestHealthRuntimeDownAfterMaxWait(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	fake := crifake.New(clk)
	h := cri.NewHealth(fake.Client(t), clk, time.Second, nil)
	ctx := context.Background()

	fake.InjectError("Status", cri.StatusError(cri.ErrUnavailable, "connection refused"))
	h.Check(ctx)
	if err := h.Err(); err == nil || !errors.Is(err, cri.ErrUnavailable) {
		t.Fatalf("never answered: Err = %v, want the runtime down", err)
	}
	h.Check(ctx)
	if err := h.Err(); err != nil || !h.Info().RuntimeReady {
		t.Fatalf("answered: Err = %v, Info = %+v", err, h.Info())
	}
	for _, after := range []time.Duration{time.Second, 29 * time.Second} {
		clk.SetTime(time.Unix(1000, 0).Add(after))
		fake.InjectError("Status", cri.StatusError(cri.ErrUnavailable, "connection refused"))
		h.Check(ctx)
		if err := h.Err(); err != nil || !h.Info().RuntimeReady {
			t.Errorf("%v after the last answer: Err = %v, Info = %+v; want the last verdict kept", after, err, h.Info())
		}
	}
	clk.SetTime(time.Unix(1000, 0).Add(cri.MaxWaitForRuntime))
	fake.InjectError("Status", cri.StatusError(cri.ErrUnavailable, "connection refused"))
	h.Check(ctx)
	if err := h.Err(); err == nil || !strings.HasPrefix(err.Error(), "container runtime is down") {
		t.Errorf("%v without an answer: Err = %v, want the runtime down", cri.MaxWaitForRuntime, err)
	}
	h.Check(ctx)
	if err := h.Err(); err != nil {
		t.Errorf("answering again: Err = %v", err)
	}
}
