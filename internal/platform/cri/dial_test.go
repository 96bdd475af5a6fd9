package cri_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

func TestDial(t *testing.T) {
	runtimeFake := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
	runtimeEndpoint := runtimeFake.Endpoint(t)
	imageFake := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
	imageFake.AddImage("busybox:1.36")
	imageEndpoint := imageFake.Endpoint(t)

	tests := []struct {
		name          string
		opts          cri.Options
		wantImageCall *crifake.Fake
	}{
		{name: "upstream form", opts: cri.Options{RuntimeEndpoint: runtimeEndpoint}, wantImageCall: runtimeFake},
		{name: "bare path", opts: cri.Options{RuntimeEndpoint: strings.TrimPrefix(runtimeEndpoint, "unix://")}, wantImageCall: runtimeFake},
		{name: "separate image endpoint", opts: cri.Options{RuntimeEndpoint: runtimeEndpoint, ImageEndpoint: imageEndpoint}, wantImageCall: imageFake},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtimeFake.ResetCalls()
			imageFake.ResetCalls()
			tc.opts.Timeout = time.Minute
			c, err := cri.Dial(context.Background(), tc.opts)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if _, err := c.Verify(context.Background()); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if _, err := c.Image.ListImages(context.Background(), &runtimeapi.ListImagesRequest{}); err != nil {
				t.Fatalf("ListImages: %v", err)
			}
			if calls := tc.wantImageCall.Calls(); len(calls) == 0 || calls[len(calls)-1] != "ListImages" {
				t.Errorf("image service calls went elsewhere: %v", calls)
			}
		})
	}
}

func TestDialRejectsBadEndpoints(t *testing.T) {
	for _, o := range []cri.Options{
		{},
		{RuntimeEndpoint: "tcp://127.0.0.1:1"},
		{RuntimeEndpoint: "unix:///run/x.sock", ImageEndpoint: "http://x"},
	} {
		if c, err := cri.Dial(context.Background(), o); err == nil {
			_ = c.Close()
			t.Errorf("Dial(%+v) succeeded, want an error", o)
		}
	}
}

func TestDialAbsentRuntimeIsUnavailable(t *testing.T) {
	c, err := cri.Dial(context.Background(), cri.Options{RuntimeEndpoint: "unix://" + t.TempDir() + "/absent.sock", Timeout: time.Minute})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Verify(context.Background()); !errors.Is(err, cri.ErrUnavailable) {
		t.Errorf("Verify of an absent runtime: %v, want cri.ErrUnavailable", err)
	}
}
