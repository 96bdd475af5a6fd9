package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestTriggersRestartAll(t *testing.T) {
	const (
		never   = corev1.ContainerRestartPolicyNever
		restart = corev1.ContainerRestartRuleActionRestart
		all     = corev1.ContainerRestartRuleActionRestartAllContainers
		in      = corev1.ContainerRestartRuleOnExitCodesOpIn
		notIn   = corev1.ContainerRestartRuleOnExitCodesOpNotIn
	)
	tests := []struct {
		name      string
		container *corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		exitCode  int32
		want      bool
	}{
		{name: "In matches", container: policy(never), rules: []corev1.ContainerRestartRule{rule(all, in, 42)}, exitCode: 42, want: true},
		{name: "In does not match", container: policy(never), rules: []corev1.ContainerRestartRule{rule(all, in, 42)}, exitCode: 1},
		{name: "NotIn matches", container: policy(never), rules: []corev1.ContainerRestartRule{rule(all, notIn, 0)}, exitCode: 3, want: true},
		{name: "an earlier Restart rule decides", container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, in, 42), rule(all, in, 42)}, exitCode: 42},
		{name: "a later rule matches when the first does not", container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, in, 1), rule(all, in, 42)}, exitCode: 42, want: true},
		{name: "no container policy: rules do not count", rules: []corev1.ContainerRestartRule{rule(all, in, 42)}, exitCode: 42},
		{name: "no rules", container: policy(never), exitCode: 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", RestartPolicy: tc.container, RestartPolicyRules: tc.rules}
			if got := TriggersRestartAll(c, tc.exitCode); got != tc.want {
				t.Errorf("TriggersRestartAll = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCanRestartAll(t *testing.T) {
	never := policy(corev1.ContainerRestartPolicyNever)
	allRule := []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleActionRestartAllContainers, corev1.ContainerRestartRuleOnExitCodesOpIn, 42)}
	restartRule := []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 42)}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want bool
	}{
		{name: "no rules", spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
		{name: "a Restart rule only", spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", RestartPolicy: never, RestartPolicyRules: restartRule}}}},
		{name: "on a regular container", spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b", RestartPolicy: never, RestartPolicyRules: allRule}}}, want: true},
		{name: "on an init container", spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "i", RestartPolicy: never, RestartPolicyRules: allRule}},
			Containers:     []corev1.Container{{Name: "a"}}}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CanRestartAll(&tc.spec); got != tc.want {
				t.Errorf("CanRestartAll = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRestartingAll(t *testing.T) {
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s}
	}
	tests := []struct {
		name   string
		status *corev1.PodStatus
		want   bool
	}{
		{name: "nil status"},
		{name: "no condition", status: &corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue)}}},
		{name: "False", status: &corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.AllContainersRestarting, corev1.ConditionFalse)}}},
		{name: "True", status: &corev1.PodStatus{Conditions: []corev1.PodCondition{
			cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.AllContainersRestarting, corev1.ConditionTrue)}}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RestartingAll(tc.status); got != tc.want {
				t.Errorf("RestartingAll = %v, want %v", got, tc.want)
			}
		})
	}
}
