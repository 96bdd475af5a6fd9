package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestResizeConditions: the Input's resize conditions come after the
// conditions other controllers own and before DisruptionTarget and the
// generated ones (upstream generateAPIPodStatus), PodResizePending first;
// ones only the API or the previous status has are dropped; a terminal
// pod has none (upstream determinePodResizeStatus).
func TestResizeConditions(t *testing.T) {
	pending := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonDeferred, Message: "not now", ObservedGeneration: 3, LastTransitionTime: mt(t0)}
	inProgress := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
		ObservedGeneration: 2, LastTransitionTime: mt(t0)}
	foreign := corev1.PodCondition{Type: "example.com/Gate", Status: corev1.ConditionTrue}
	disruption := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}
	zeroGen := func(c corev1.PodCondition) corev1.PodCondition { c.ObservedGeneration = 0; return c }
	tests := []struct {
		name       string
		resize     []corev1.PodCondition
		terminal   bool
		generation int64
		want       []corev1.PodCondition // before the generated ones
	}{
		{name: "none", want: []corev1.PodCondition{foreign, disruption}},
		{name: "both, upstream's order whatever the input's", resize: []corev1.PodCondition{inProgress, pending},
			want: []corev1.PodCondition{foreign, pending, inProgress, disruption}},
		{name: "in progress only", resize: []corev1.PodCondition{inProgress},
			want: []corev1.PodCondition{foreign, inProgress, disruption}},
		{name: "other types ignored, first of a type kept",
			resize: []corev1.PodCondition{foreign, pending, {Type: corev1.PodResizePending, Reason: "second"}},
			want:   []corev1.PodCondition{foreign, pending, disruption}},
		{name: "terminal: none", resize: []corev1.PodCondition{pending, inProgress}, terminal: true,
			want: []corev1.PodCondition{foreign, disruption}},
		{name: "a pod without generation: no observed generation", resize: []corev1.PodCondition{pending, inProgress}, generation: -1,
			want: []corev1.PodCondition{foreign, zeroGen(pending), zeroGen(inProgress), disruption}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := staticPod("app")
			pod.Generation = 5
			if tt.generation < 0 {
				pod.Generation = 0
			}
			// Stale resize conditions in the API and the previous status.
			stale := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, Reason: "stale"}
			pod.Status.Conditions = []corev1.PodCondition{foreign, stale}
			prev := corev1.PodStatus{Conditions: []corev1.PodCondition{stale, disruption}}
			in := Input{Pod: pod, Previous: &prev, Resize: tt.resize, Terminal: tt.terminal, Now: now,
				Runtime: rt(sbs(readySandbox("10.244.0.5")), running("app", "c1", 0))}
			got := Generate(in).Conditions
			if len(got) < len(tt.want) {
				t.Fatalf("conditions = %v, want at least %d", got, len(tt.want))
			}
			if diff := cmp.Diff(tt.want, got[:len(tt.want)]); diff != "" {
				t.Errorf("conditions before the generated ones (-want +got):\n%s", diff)
			}
			for _, c := range got[len(tt.want):] {
				if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
					t.Errorf("extra resize condition %v", c)
				}
			}
		})
	}
}
