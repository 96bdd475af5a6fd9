package podcidr

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/platform/cri/crifake"
)

func TestUpdate(t *testing.T) {
	type step struct {
		cidr        string
		inject      bool
		wantChanged bool
		wantErr     bool
		wantRuntime string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "empty at start: no call", steps: []step{{cidr: ""}}},
		{name: "standalone --pod-cidr", steps: []step{{cidr: "10.1.0.0/24", wantChanged: true, wantRuntime: "10.1.0.0/24"}}},
		{name: "unchanged: no call", steps: []step{
			{cidr: "10.1.0.0/24", wantChanged: true, wantRuntime: "10.1.0.0/24"},
			{cidr: "10.1.0.0/24", wantRuntime: "10.1.0.0/24"},
		}},
		{name: "dual-stack change", steps: []step{
			{cidr: "10.1.0.0/24", wantChanged: true, wantRuntime: "10.1.0.0/24"},
			{cidr: "10.2.0.0/24,fd00::/64", wantChanged: true, wantRuntime: "10.2.0.0/24,fd00::/64"},
		}},
		{name: "a failed call is retried", steps: []step{
			{cidr: "10.1.0.0/24", inject: true, wantChanged: true, wantErr: true},
			{cidr: "10.1.0.0/24", wantChanged: true, wantRuntime: "10.1.0.0/24"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := crifake.New(clock.RealClock{})
			u := New(fake.Client(t).Runtime)
			for i, s := range tt.steps {
				if s.inject {
					fake.InjectError("UpdateRuntimeConfig", cri.StatusError(cri.ErrUnavailable, "down"))
				}
				changed, err := u.Update(context.Background(), s.cidr)
				if changed != s.wantChanged || (err != nil) != s.wantErr {
					t.Errorf("step %d: Update(%q) = %t, %v; want %t, error %t", i, s.cidr, changed, err, s.wantChanged, s.wantErr)
				}
				if got := fake.PodCIDR(); got != s.wantRuntime {
					t.Errorf("step %d: runtime pod CIDR %q, want %q", i, got, s.wantRuntime)
				}
			}
			var want []string
			for _, s := range tt.steps {
				if s.wantChanged {
					want = append(want, "UpdateRuntimeConfig")
				}
			}
			if diff := cmp.Diff(want, fake.Calls()); diff != "" {
				t.Errorf("CRI calls (-want +got):\n%s", diff)
			}
		})
	}
}
