package nodestatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodCapacity(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		maxPods, podsPerCore int32
		numCPU               int
		want                 int32
	}{
		{name: "no per-core limit", maxPods: 110, numCPU: 4, want: 110},
		{name: "per-core limit below maxPods", maxPods: 110, podsPerCore: 10, numCPU: 4, want: 40},
		{name: "per-core limit above maxPods", maxPods: 110, podsPerCore: 50, numCPU: 4, want: 110},
		{name: "equal", maxPods: 40, podsPerCore: 10, numCPU: 4, want: 40},
		{name: "no overflow", maxPods: 110, podsPerCore: 1 << 30, numCPU: 64, want: 110},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodCapacity(tc.maxPods, tc.podsPerCore, tc.numCPU)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodCapacity(%d, %d, %d) (-want +got):\n%s", tc.maxPods, tc.podsPerCore, tc.numCPU, diff)
			}
		})
	}
}
