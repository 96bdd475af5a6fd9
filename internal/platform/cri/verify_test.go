package cri_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

func TestVerify(t *testing.T) {
	base := cri.Info{
		RuntimeName:       crifake.RuntimeName,
		RuntimeVersion:    crifake.RuntimeVersion,
		RuntimeAPIVersion: "v1",
		RuntimeReady:      true,
		NetworkReady:      true,
	}
	tests := []struct {
		name    string
		setup   func(*crifake.Fake)
		want    func(*cri.Info)
		wantErr error
	}{
		{name: "ready, RuntimeConfig unimplemented", setup: func(*crifake.Fake) {}, want: func(*cri.Info) {}},
		{
			name:  "systemd driver",
			setup: func(f *crifake.Fake) { _ = f.SetCgroupDriver("systemd") },
			want:  func(i *cri.Info) { i.CgroupDriver = "systemd" },
		},
		{
			name:  "cgroupfs driver",
			setup: func(f *crifake.Fake) { _ = f.SetCgroupDriver("cgroupfs") },
			want:  func(i *cri.Info) { i.CgroupDriver = "cgroupfs" },
		},
		{
			name:  "network not ready",
			setup: func(f *crifake.Fake) { f.SetNetworkReady(false) },
			want: func(i *cri.Info) {
				i.NetworkReady = false
				i.NetworkMessage = "NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized"
			},
		},
		{
			name:  "runtime not ready",
			setup: func(f *crifake.Fake) { f.SetRuntimeReady(false) },
			want: func(i *cri.Info) {
				i.RuntimeReady = false
				i.RuntimeMessage = "RuntimeNotReady: fake runtime is not ready"
			},
		},
		{
			name: "version fails",
			setup: func(f *crifake.Fake) {
				f.InjectError("Version", cri.StatusError(cri.ErrUnavailable, "connection refused"))
			},
			wantErr: cri.ErrUnavailable,
		},
		{
			name:    "status fails",
			setup:   func(f *crifake.Fake) { f.InjectError("Status", cri.StatusError(cri.ErrDeadlineExceeded, "slow")) },
			wantErr: cri.ErrDeadlineExceeded,
		},
		{
			name:    "runtime config fails otherwise",
			setup:   func(f *crifake.Fake) { f.InjectError("RuntimeConfig", cri.StatusError(cri.ErrInvalidArgument, "odd")) },
			wantErr: cri.ErrInvalidArgument,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
			tc.setup(f)
			got, err := f.Client(t).Verify(context.Background())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Verify error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := base
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Verify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusReportsReadinessOnly(t *testing.T) {
	f := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
	f.SetNetworkReady(false)
	c := f.Client(t)
	got, err := c.Status(context.Background())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	want := cri.Info{RuntimeReady: true, NetworkMessage: "NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Status"}, f.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestStatusReportsRuntimeHandlers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*crifake.Fake)
		want  []cri.RuntimeHandler
	}{
		{name: "none reported (containerd 1.6)", setup: func(*crifake.Fake) {}},
		{name: "user namespaces supported", setup: func(f *crifake.Fake) { f.SetRuntimeHandlers(true, "kata") },
			want: []cri.RuntimeHandler{{Name: "", UserNamespaces: true, RecursiveReadOnlyMounts: true}, {Name: "kata", UserNamespaces: true, RecursiveReadOnlyMounts: true}}},
		{name: "user namespaces not supported", setup: func(f *crifake.Fake) { f.SetRuntimeHandlers(false) },
			want: []cri.RuntimeHandler{{Name: "", RecursiveReadOnlyMounts: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
			tc.setup(f)
			got, err := f.Client(t).Status(context.Background())
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Handlers); diff != "" {
				t.Errorf("handlers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusReportsRuntimeFeatures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		features *runtimeapi.RuntimeFeatures
		want     cri.RuntimeFeatures
	}{
		{name: "none reported"},
		{name: "user namespaces with host network", features: &runtimeapi.RuntimeFeatures{UserNamespacesHostNetwork: true},
			want: cri.RuntimeFeatures{UserNamespacesHostNetwork: true}},
		{name: "mount options", features: &runtimeapi.RuntimeFeatures{MountOptions: true, SupplementalGroupsPolicy: true},
			want: cri.RuntimeFeatures{MountOptions: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := crifake.New(clocktesting.NewFakeClock(time.Unix(0, 0)))
			f.SetRuntimeFeatures(tc.features)
			got, err := f.Client(t).Status(context.Background())
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Features); diff != "" {
				t.Errorf("features (-want +got):\n%s", diff)
			}
		})
	}
}
