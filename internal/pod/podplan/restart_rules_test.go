package podplan

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestComputeContainerRestartRules: per-container restartPolicy and
// restartPolicyRules (ContainerRestartRules, on by default since v1.35)
// decide restarts before the pod's restartPolicy, in the planner as in the
// status generator (both through podutil).
func TestComputeContainerRestartRules(t *testing.T) {
	now := at(time.Hour)
	always := corev1.ContainerRestartPolicyAlways
	never := corev1.ContainerRestartPolicyNever
	onFailure := corev1.ContainerRestartPolicyOnFailure
	onCodes := func(op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []corev1.ContainerRestartRule {
		return []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
			ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
	}
	tests := []struct {
		name   string
		pod    corev1.RestartPolicy
		policy *corev1.ContainerRestartPolicy
		rules  []corev1.ContainerRestartRule
		code   int32
		want   Actions
	}{
		{
			name: "pod Never, container Always, exit 0: restarted",
			pod:  corev1.RestartPolicyNever, policy: &always, code: 0,
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name: "pod Always, container Never, exit 1: kept down, pod kept for the other container",
			pod:  corev1.RestartPolicyAlways, policy: &never, code: 1,
			want: Actions{},
		},
		{
			name: "pod Never, container OnFailure, exit 3: restarted",
			pod:  corev1.RestartPolicyNever, policy: &onFailure, code: 3,
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name: "pod Never, container Never, rule In [42] matches: restarted",
			pod:  corev1.RestartPolicyNever, policy: &never, rules: onCodes(corev1.ContainerRestartRuleOnExitCodesOpIn, 42), code: 42,
			want: Actions{SandboxID: "sb-0", StartContainers: []int{0}},
		},
		{
			name: "pod Never, container Never, rule In [42] does not match: kept down",
			pod:  corev1.RestartPolicyNever, policy: &never, rules: onCodes(corev1.ContainerRestartRuleOnExitCodesOpIn, 42), code: 1,
			want: Actions{},
		},
		{
			name: "pod Always, container Never, rule NotIn [0] on exit 0: kept down",
			pod:  corev1.RestartPolicyAlways, policy: &never, rules: onCodes(corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0), code: 0,
			want: Actions{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod(tc.pod, nil, []string{"web", "log"})
			pod.Spec.Containers[0].RestartPolicy = tc.policy
			pod.Spec.Containers[0].RestartPolicyRules = tc.rules
			in := Inputs{
				Pod: pod,
				Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)),
					exited(pod, "web", "web-1", "sb-0", tc.code, at(59*time.Minute)),
					running(pod, "log", "log-1", "sb-0"),
				),
				Now: now,
			}
			got := Compute(in)
			got.Backoff = nil // the gate's bookkeeping is TestBackoff's business
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeProbeKillHonoursContainerPolicy: a container killed by its
// liveness probe is restarted per its own restartPolicy when it has one.
func TestComputeProbeKillHonoursContainerPolicy(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := newPod(corev1.RestartPolicyNever, nil, []string{"web"})
	pod.Spec.Containers[0].RestartPolicy = &always
	in := Inputs{
		Pod:     pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), running(pod, "web", "web-1", "sb-0")),
		Probes:  ProbeSnapshot{LivenessFailed: map[string]bool{"web-1": true}},
		Now:     at(time.Hour),
	}
	got := Compute(in)
	want := Actions{
		SandboxID:       "sb-0",
		StartContainers: []int{0},
		KillContainers: map[ContainerRef]KillReason{{ID: "web-1", Name: "web"}: {
			Reason: KillReasonLivenessProbe, Message: "Container web failed liveness probe, will be restarted"}},
	}
	got.Backoff = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
}

// TestComputeInitContainerRestartRules: an ordinary init container that
// fails is restarted per its own restartPolicy and rules even when the pod's
// policy is Never.
func TestComputeInitContainerRestartRules(t *testing.T) {
	onFailure := corev1.ContainerRestartPolicyOnFailure
	pod := newPod(corev1.RestartPolicyNever, []string{"setup"}, []string{"web"})
	pod.Spec.InitContainers[0].RestartPolicy = &onFailure
	in := Inputs{
		Pod:     pod,
		Runtime: rtPod(sandboxes(readySandbox("sb-0", 0)), exited(pod, "setup", "setup-1", "sb-0", 1, at(59*time.Minute))),
		Now:     at(time.Hour),
	}
	got := Compute(in)
	got.Backoff = nil
	if diff := cmp.Diff(Actions{SandboxID: "sb-0", InitContainers: []int{0}}, got); diff != "" {
		t.Errorf("Compute (-want +got):\n%s", diff)
	}
}
