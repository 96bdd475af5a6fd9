package crifake_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// TestSimKnobs: a pod subnet, every image pullable, no call log, and a
// latency that holds a call until the fake clock passes it.
func TestSimKnobs(t *testing.T) {
	w := newWorld(t)
	w.f.SetPodSubnet("10.0.7")
	w.f.AllowAllPulls()
	w.f.DisableCallLog()
	id := w.sandbox(t, "a", false)
	st, err := w.c.Runtime.PodSandboxStatus(w.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		t.Fatal(err)
	}
	if ip := st.GetStatus().GetNetwork().GetIp(); ip != "10.0.7.2" {
		t.Errorf("pod IP %q; want 10.0.7.2", ip)
	}
	if _, err := w.c.Image.PullImage(w.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "example.com/any:1"}}); err != nil {
		t.Errorf("PullImage with every ref pullable: %v", err)
	}
	if calls := w.f.Calls(); len(calls) != 0 {
		t.Errorf("calls logged with the log off: %v", calls)
	}

	w.f.SetLatency("RunPodSandbox", 5*time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := w.c.Runtime.RunPodSandbox(w.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("b", false)})
		done <- err
	}()
	for !w.clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("RunPodSandbox returned before its latency passed: %v", err)
	default:
	}
	w.clk.Step(5 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("RunPodSandbox after its latency: %v", err)
	}
}

// TestDial: the client Dial returns works without a testing.TB and stops
// answering once closed.
func TestDial(t *testing.T) {
	w := newWorld(t)
	c, closeFn, err := w.f.Dial(cri.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{}); err != nil {
		t.Fatalf("Version: %v", err)
	}
	closeFn()
	if _, err := c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{}); err == nil {
		t.Error("Version answered after close")
	}
}

// TestFailureRate: a rate of 0.25 fails every fourth call with the error
// set, the same calls in every run; one-shot injections go first; 0 ends
// it.
func TestFailureRate(t *testing.T) {
	w := newWorld(t)
	w.f.SetFailureRate("Version", 0.25, cri.StatusError(cri.ErrUnavailable, "simulated"))
	w.f.InjectError("Version", cri.StatusError(cri.ErrDeadlineExceeded, "once"))
	var got []string
	for range 9 {
		_, err := w.c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{})
		switch {
		case err == nil:
			got = append(got, "ok")
		case errors.Is(err, cri.ErrUnavailable):
			got = append(got, "unavailable")
		case errors.Is(err, cri.ErrDeadlineExceeded):
			got = append(got, "deadline")
		default:
			t.Fatalf("Version: %v", err)
		}
	}
	want := []string{"deadline", "ok", "ok", "ok", "unavailable", "ok", "ok", "ok", "unavailable"}
	if !slices.Equal(got, want) {
		t.Errorf("calls %v; want %v", got, want)
	}
	w.f.SetFailureRate("Version", 0, nil)
	for range 4 {
		if _, err := w.c.Runtime.Version(w.ctx, &runtimeapi.VersionRequest{}); err != nil {
			t.Fatalf("Version with the rate removed: %v", err)
		}
	}
}
