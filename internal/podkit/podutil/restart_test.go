package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func policy(p corev1.ContainerRestartPolicy) *corev1.ContainerRestartPolicy { return &p }

func rule(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
	return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

func TestContainerShouldRestart(t *testing.T) {
	const (
		always    = corev1.ContainerRestartPolicyAlways
		onFailure = corev1.ContainerRestartPolicyOnFailure
		never     = corev1.ContainerRestartPolicyNever
		restart   = corev1.ContainerRestartRuleActionRestart
		all       = corev1.ContainerRestartRuleActionRestartAllContainers
		in        = corev1.ContainerRestartRuleOnExitCodesOpIn
		notIn     = corev1.ContainerRestartRuleOnExitCodesOpNotIn
	)
	tests := []struct {
		name      string
		pod       corev1.RestartPolicy
		container *corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		exitCode  int32
		want      bool
	}{
		{name: "pod Always, exit 0", pod: corev1.RestartPolicyAlways, want: true},
		{name: "pod default is Always", pod: "", exitCode: 3, want: true},
		{name: "pod OnFailure, exit 0", pod: corev1.RestartPolicyOnFailure, want: false},
		{name: "pod OnFailure, exit 1", pod: corev1.RestartPolicyOnFailure, exitCode: 1, want: true},
		{name: "pod Never, exit 1", pod: corev1.RestartPolicyNever, exitCode: 1, want: false},
		{name: "pod Never, container Always", pod: corev1.RestartPolicyNever, container: policy(always), want: true},
		{name: "pod Always, container Never", pod: corev1.RestartPolicyAlways, container: policy(never), exitCode: 1, want: false},
		{name: "pod Never, container OnFailure, exit 2", pod: corev1.RestartPolicyNever, container: policy(onFailure), exitCode: 2, want: true},
		{name: "pod Never, container OnFailure, exit 0", pod: corev1.RestartPolicyNever, container: policy(onFailure), want: false},
		{name: "rule In matches", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, in, 42)}, exitCode: 42, want: true},
		{name: "rule In does not match", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, in, 42)}, exitCode: 1, want: false},
		{name: "rule NotIn matches", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, notIn, 0)}, exitCode: 7, want: true},
		{name: "rule NotIn excluded code", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(restart, notIn, 0)}, exitCode: 0, want: false},
		{name: "first matching rule decides", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule("Other", in, 5), rule(restart, in, 5)}, exitCode: 5, want: false},
		{name: "RestartAllContainers restarts", pod: corev1.RestartPolicyNever, container: policy(never),
			rules: []corev1.ContainerRestartRule{rule(all, in, 9)}, exitCode: 9, want: true},
		{name: "rules without container policy do not count", pod: corev1.RestartPolicyNever,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 42)}, exitCode: 42, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", RestartPolicy: tc.container, RestartPolicyRules: tc.rules}
			spec := &corev1.PodSpec{RestartPolicy: tc.pod}
			if got := ContainerShouldRestart(c, spec, tc.exitCode); got != tc.want {
				t.Errorf("ContainerShouldRestart = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRestartsAfterKillRunsOnceIsRestartable(t *testing.T) {
	tests := []struct {
		name                             string
		pod                              corev1.RestartPolicy
		container                        *corev1.ContainerRestartPolicy
		rules                            []corev1.ContainerRestartRule
		afterKill, runsOnce, restartable bool
	}{
		{name: "pod Always", pod: corev1.RestartPolicyAlways, afterKill: true, restartable: true},
		{name: "pod OnFailure", pod: corev1.RestartPolicyOnFailure, afterKill: true, runsOnce: true, restartable: true},
		{name: "pod Never", pod: corev1.RestartPolicyNever},
		{name: "pod Never, container Always", pod: corev1.RestartPolicyNever, container: policy(corev1.ContainerRestartPolicyAlways), afterKill: true, restartable: true},
		{name: "pod Always, container OnFailure", pod: corev1.RestartPolicyAlways, container: policy(corev1.ContainerRestartPolicyOnFailure), afterKill: true, runsOnce: true, restartable: true},
		{name: "pod Always, container Never", pod: corev1.RestartPolicyAlways, container: policy(corev1.ContainerRestartPolicyNever)},
		{name: "container Never with a Restart rule", pod: corev1.RestartPolicyNever, container: policy(corev1.ContainerRestartPolicyNever),
			rules: []corev1.ContainerRestartRule{rule(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 1)}, restartable: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", RestartPolicy: tc.container, RestartPolicyRules: tc.rules}
			spec := &corev1.PodSpec{RestartPolicy: tc.pod}
			if got := RestartsAfterKill(c, spec); got != tc.afterKill {
				t.Errorf("RestartsAfterKill = %v, want %v", got, tc.afterKill)
			}
			if got := RunsOnce(c, spec); got != tc.runsOnce {
				t.Errorf("RunsOnce = %v, want %v", got, tc.runsOnce)
			}
			if got := IsRestartable(c, spec); got != tc.restartable {
				t.Errorf("IsRestartable = %v, want %v", got, tc.restartable)
			}
		})
	}
}

func TestPredicates(t *testing.T) {
	always := policy(corev1.ContainerRestartPolicyAlways)
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "side", RestartPolicy: always}, {Name: "init"}},
		Containers:     []corev1.Container{{Name: "main", RestartPolicy: always}},
	}
	if !IsSidecarIn(spec, &spec.InitContainers[0]) || IsSidecarIn(spec, &spec.InitContainers[1]) {
		t.Error("IsSidecarIn: only the restartable init container is a sidecar")
	}
	if IsSidecarIn(spec, &spec.Containers[0]) {
		t.Error("IsSidecarIn: a regular container with restartPolicy Always is not a sidecar")
	}
	for phase, want := range map[corev1.PodPhase]bool{corev1.PodSucceeded: true, corev1.PodFailed: true, corev1.PodRunning: false, corev1.PodPending: false, "": false} {
		if IsTerminal(phase) != want {
			t.Errorf("IsTerminal(%q) = %v", phase, !want)
		}
	}
	for src, want := range map[string]bool{FileSource: true, HTTPSource: true, APISource: false} {
		pod := &corev1.Pod{}
		pod.Annotations = map[string]string{ConfigSourceAnnotation: src}
		if IsStatic(pod) != want {
			t.Errorf("IsStatic(source %q) = %v", src, !want)
		}
	}
	if IsStatic(&corev1.Pod{}) {
		t.Error("IsStatic: a pod without the annotation is not static")
	}
}
