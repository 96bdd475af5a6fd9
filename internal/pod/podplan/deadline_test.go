package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestComputeDeadline: the activeDeadlineSeconds rows over the steady base
// pod (now = at(1h)); the pod started at at(0).
func TestComputeDeadline(t *testing.T) {
	start := at(0)
	withDeadline := func(seconds int64) func(in *Inputs) {
		return func(in *Inputs) {
			in.Pod.Spec.ActiveDeadlineSeconds = ptr.To(seconds)
			in.StartTime = start
		}
	}
	fresh := func(in *Inputs) { in.Runtime = nil }
	tests := []struct {
		name   string
		mutate []func(in *Inputs)
		want   Actions
	}{
		{
			name: "no deadline: nothing to do",
			want: Actions{},
		},
		{
			name:   "before the deadline: the pod runs, woken at the deadline",
			mutate: []func(in *Inputs){withDeadline(7200)},
			want:   Actions{Deadline: Deadline{At: at(2 * time.Hour)}},
		},
		{
			name:   "before the deadline, a fresh pod starts as usual",
			mutate: []func(in *Inputs){withDeadline(7200), fresh},
			want:   Actions{CreateSandbox: true, StartContainers: []int{0, 1}, Deadline: Deadline{At: at(2 * time.Hour)}},
		},
		{
			name:   "at the deadline: exceeded",
			mutate: []func(in *Inputs){withDeadline(3600)},
			want:   Actions{Deadline: Deadline{At: at(time.Hour), Exceeded: true}},
		},
		{
			name:   "after the deadline: exceeded, nothing started",
			mutate: []func(in *Inputs){withDeadline(60), fresh},
			want:   Actions{Deadline: Deadline{At: at(time.Minute), Exceeded: true}},
		},
		{
			name: "deadline raised by an update: no longer exceeded",
			mutate: []func(in *Inputs){withDeadline(60), func(in *Inputs) {
				in.Pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3601)
			}},
			want: Actions{Deadline: Deadline{At: at(time.Hour + time.Second)}},
		},
		{
			name: "deadline lowered by an update: exceeded",
			mutate: []func(in *Inputs){withDeadline(30000), func(in *Inputs) {
				in.Pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
			}},
			want: Actions{Deadline: Deadline{At: at(5 * time.Second), Exceeded: true}},
		},
		{
			name:   "no start time yet: no deadline",
			mutate: []func(in *Inputs){withDeadline(60), func(in *Inputs) { in.StartTime = time.Time{} }},
			want:   Actions{},
		},
		{
			name:   "terminal pod: no deadline",
			mutate: []func(in *Inputs){withDeadline(60), func(in *Inputs) { in.PreviousPhase = corev1.PodSucceeded }},
			want:   Actions{},
		},
		{
			name:   "running pod past its deadline",
			mutate: []func(in *Inputs){withDeadline(60), func(in *Inputs) { in.PreviousPhase = corev1.PodRunning }},
			want:   Actions{Deadline: Deadline{At: at(time.Minute), Exceeded: true}},
		},
		{
			name:   "a deadline beyond the API's bound is none",
			mutate: []func(in *Inputs){withDeadline(1 << 40)},
			want:   Actions{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInputs()
			for _, m := range tt.mutate {
				m(&in)
			}
			if diff := cmp.Diff(tt.want, Compute(in)); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}
