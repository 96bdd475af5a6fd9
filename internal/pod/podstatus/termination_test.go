package podstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestGenerateTermination: a pod berth ends itself reports upstream's
// status: Failed unless it Succeeded, the termination's reason and message,
// and a True DisruptionTarget with reason TerminationByKubelet.
func TestGenerateTermination(t *testing.T) {
	shutdown := &Termination{Reason: "Terminated", Message: "Pod was terminated in response to imminent node shutdown."}
	disruption := func(at corev1.PodCondition) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: 3,
			Reason: corev1.PodReasonTerminationByKubelet, Message: shutdown.Message, LastTransitionTime: at.LastTransitionTime}
	}
	tests := []struct {
		name       string
		term       *Termination
		exitedZero bool
		previous   *corev1.PodStatus
		wantPhase  corev1.PodPhase
		wantReason string
		wantCond   *corev1.PodCondition
	}{
		{name: "no termination", wantPhase: corev1.PodRunning},
		{name: "running pod being shut down", term: shutdown, wantPhase: corev1.PodFailed, wantReason: "Terminated",
			wantCond: &corev1.PodCondition{LastTransitionTime: mt(now)}},
		{name: "transition time kept", term: shutdown, wantPhase: corev1.PodFailed, wantReason: "Terminated",
			previous: &corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: mt(t0)}}},
			wantCond: &corev1.PodCondition{LastTransitionTime: mt(t0)}},
		{name: "succeeded pod stays succeeded", term: shutdown, wantPhase: corev1.PodSucceeded, wantReason: "Terminated",
			previous: &corev1.PodStatus{Phase: corev1.PodSucceeded},
			wantCond: &corev1.PodCondition{LastTransitionTime: mt(now)}},
		{name: "failed at the kill stays failed when containers exit 0", term: shutdown, wantPhase: corev1.PodFailed, wantReason: "Terminated",
			exitedZero: true, previous: &corev1.PodStatus{Phase: corev1.PodFailed},
			wantCond: &corev1.PodCondition{LastTransitionTime: mt(now)}},
		{name: "succeeding on its own without termination", exitedZero: true, wantPhase: corev1.PodSucceeded},
		{name: "running pod past its deadline", term: DeadlineExceeded(), wantPhase: corev1.PodFailed, wantReason: "DeadlineExceeded"},
		{name: "past its deadline as its containers succeed: Failed", term: DeadlineExceeded(), wantPhase: corev1.PodFailed, wantReason: "DeadlineExceeded",
			exitedZero: true},
		{name: "past its deadline, killed containers exit 0: stays Failed", term: DeadlineExceeded(), wantPhase: corev1.PodFailed, wantReason: "DeadlineExceeded",
			exitedZero: true, previous: &corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}},
		{name: "deadline over a pod that already succeeded: Succeeded kept", term: DeadlineExceeded(), wantPhase: corev1.PodSucceeded, wantReason: "DeadlineExceeded",
			exitedZero: true, previous: &corev1.PodStatus{Phase: corev1.PodSucceeded}},
		{name: "no DisruptionTarget asked (local storage eviction)", term: &Termination{Reason: "Terminated", Message: shutdown.Message, NoDisruptionTarget: true},
			wantPhase: corev1.PodFailed, wantReason: "Terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := staticPod("app")
			pod.Generation = 3
			runtime := rt(sbs(readySandbox("10.0.0.1")), running("app", "c1", 0))
			if tt.exitedZero {
				pod = withPolicy(pod, corev1.RestartPolicyNever)
				runtime = rt(sbs(readySandbox("10.0.0.1")), exited("app", "c1", 0, "Completed", 0))
			}
			got := Generate(Input{Pod: pod, Runtime: runtime, Previous: tt.previous, Termination: tt.term, Terminal: tt.exitedZero, Now: now})
			if got.Phase != tt.wantPhase || got.Reason != tt.wantReason {
				t.Errorf("phase %q reason %q; want %q %q", got.Phase, got.Reason, tt.wantPhase, tt.wantReason)
			}
			if tt.term != nil && got.Message != tt.term.Message {
				t.Errorf("message %q; want %q", got.Message, tt.term.Message)
			}
			var gotCond *corev1.PodCondition
			for i := range got.Conditions {
				if got.Conditions[i].Type == corev1.DisruptionTarget {
					if gotCond != nil {
						t.Error("two DisruptionTarget conditions")
					}
					gotCond = &got.Conditions[i]
				}
			}
			var want *corev1.PodCondition
			if tt.wantCond != nil {
				w := disruption(*tt.wantCond)
				want = &w
			}
			if diff := cmp.Diff(want, gotCond); diff != "" {
				t.Errorf("DisruptionTarget (-want +got):\n%s", diff)
			}
		})
	}
}
