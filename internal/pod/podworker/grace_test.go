package podworker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestEffectiveGracePeriod(t *testing.T) {
	pod := func(spec, deletion *int64) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metaWithDeletionGrace(deletion),
			Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: spec},
		}
	}
	type result struct {
		Grace     int64
		Shortened bool
	}
	tests := []struct {
		name     string
		prev     int64
		pod      *corev1.Pod
		override *int64
		want     result
	}{
		{"spec is the default", 0, pod(ptr.To[int64](30), nil), nil, result{30, false}},
		{"no spec, nothing given: minimum", 0, pod(nil, nil), nil, result{1, false}},
		{"nil pod (orphan), nothing given: minimum", 0, nil, nil, result{1, false}},
		{"nil pod with override", 0, nil, ptr.To[int64](5), result{5, false}},
		{"deletion grace shorter than spec", 0, pod(ptr.To[int64](30), ptr.To[int64](10)), nil, result{10, false}},
		{"deletion grace longer than spec is honoured", 0, pod(ptr.To[int64](30), ptr.To[int64](60)), nil, result{60, false}},
		{"override shorter than deletion grace", 0, pod(ptr.To[int64](30), ptr.To[int64](10)), ptr.To[int64](3), result{3, false}},
		{"override longer than deletion grace", 0, pod(ptr.To[int64](30), ptr.To[int64](10)), ptr.To[int64](20), result{10, false}},
		{"override zero becomes minimum", 0, pod(ptr.To[int64](30), nil), ptr.To[int64](0), result{1, false}},
		{"spec zero becomes minimum", 0, pod(ptr.To[int64](0), nil), nil, result{1, false}},
		{"in force, nothing new: unchanged", 30, pod(ptr.To[int64](30), nil), nil, result{30, false}},
		{"in force, spec shorter does not apply", 30, pod(ptr.To[int64](5), nil), nil, result{30, false}},
		{"in force, longer override ignored", 10, pod(ptr.To[int64](30), nil), ptr.To[int64](20), result{10, false}},
		{"in force, longer deletion grace ignored", 10, pod(ptr.To[int64](30), ptr.To[int64](20)), nil, result{10, false}},
		{"in force, shorter override shortens", 30, pod(ptr.To[int64](30), nil), ptr.To[int64](2), result{2, true}},
		{"in force, shorter deletion grace shortens", 30, pod(ptr.To[int64](30), ptr.To[int64](7)), nil, result{7, true}},
		{"in force, force kill shortens to minimum", 30, pod(ptr.To[int64](30), nil), ptr.To[int64](0), result{1, true}},
		{"at minimum, force kill unchanged", 1, pod(ptr.To[int64](30), nil), ptr.To[int64](0), result{1, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			got.Grace, got.Shortened = effectiveGracePeriod(tc.prev, tc.pod, tc.override)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("effectiveGracePeriod mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
