package statussync

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestStatusPatch(t *testing.T) {
	T := corev1.ConditionTrue
	lb := corev1.PodCondition{Type: "example.com/lb", Status: T, LastTransitionTime: mt(t0)}
	old := corev1.PodStatus{
		Phase:      corev1.PodPending,
		Conditions: []corev1.PodCondition{lb, cond(corev1.PodScheduled, T, t0)},
	}
	tests := []struct {
		name          string
		old, new      corev1.PodStatus
		want          string
		wantUnchanged bool
	}{
		{
			name: "nothing to change",
			old:  old, new: old,
			want:          `{"metadata":{"uid":"u1"}}`,
			wantUnchanged: true,
		},
		{
			name: "phase and a new condition; other conditions untouched",
			old:  old,
			new: corev1.PodStatus{
				Phase:      corev1.PodRunning,
				PodIP:      "10.244.0.5",
				PodIPs:     []corev1.PodIP{{IP: "10.244.0.5"}},
				Conditions: []corev1.PodCondition{lb, cond(corev1.PodScheduled, T, t0), cond(corev1.PodReady, T, now)},
			},
			want: `{"metadata":{"uid":"u1"},"status":{"$setElementOrder/conditions":[{"type":"example.com/lb"},{"type":"PodScheduled"},{"type":"Ready"}],` +
				`"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-22T19:01:00Z","status":"True","type":"Ready"}],` +
				`"phase":"Running","podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}]}}`,
		},
		{
			name: "a kubelet condition that went away is deleted by its key",
			old:  old,
			new:  corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{lb}},
			want: `{"metadata":{"uid":"u1"},"status":{"$setElementOrder/conditions":[{"type":"example.com/lb"}],"conditions":[{"$patch":"delete","type":"PodScheduled"}]}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			patch, unchanged, err := statusPatch("u1", tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if unchanged != tc.wantUnchanged {
				t.Errorf("unchanged = %v, want %v", unchanged, tc.wantUnchanged)
			}
			// Compare as JSON values: key order within objects is not part of the contract.
			var got, want any
			if err := json.Unmarshal(patch, &got); err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patch mismatch (-want +got):\n%s\ngot %s", diff, patch)
			}
		})
	}
}
