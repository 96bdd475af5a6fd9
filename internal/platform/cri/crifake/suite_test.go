package crifake_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri/crifake"
	"github.com/berthk8s/berth/internal/platform/cri/critest"
)

func TestSuite(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	f := crifake.New(clk)
	f.AddImage("busybox:1.36")
	f.AddImage("registry.k8s.io/pause:3.10.1")
	critest.RunSuite(t, critest.Env{
		Client:       f.Client(t),
		Image:        "docker.io/library/busybox:1.36",
		SandboxImage: "registry.k8s.io/pause:3.10.1",
		LogDir:       t.TempDir(),
		Exit: func(id string, code int32) error {
			clk.Step(time.Second)
			return f.ExitContainer(id, code, "")
		},
	})
}
