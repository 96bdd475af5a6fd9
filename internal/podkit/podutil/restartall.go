package podutil

import corev1 "k8s.io/api/core/v1"

// RestartAllContainers (RestartAllContainersOnContainerExits, beta and on
// by default since v1.36): a container whose exit matches a rule with the
// RestartAllContainers action has every container of the pod killed and
// removed, then the pod starts over from its first init container in the
// same sandbox.

// TriggersRestartAll reports whether c exiting with exitCode restarts all
// the pod's containers: its first matching restartPolicyRule has the
// RestartAllContainers action (upstream's ShouldAllContainersRestart for
// one container). As in ContainerShouldRestart, rules count only with a
// container-level restartPolicy, as the API requires.
func TriggersRestartAll(c *corev1.Container, exitCode int32) bool {
	if c.RestartPolicy == nil {
		return false
	}
	rule, ok := MatchingRestartRule(c, exitCode)
	return ok && rule.Action == corev1.ContainerRestartRuleActionRestartAllContainers
}

// CanRestartAll reports whether any container of spec (init or regular)
// has a RestartAllContainers rule (upstream's AllContainersCouldRestart):
// only such pods carry the AllContainersRestarting condition.
func CanRestartAll(spec *corev1.PodSpec) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for _, r := range cs[i].RestartPolicyRules {
				if r.Action == corev1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// RestartingAll reports whether status carries the AllContainersRestarting
// condition with status True: a RestartAllContainers restart was decided
// and its containers may not all be removed yet. A nil status is not.
func RestartingAll(status *corev1.PodStatus) bool {
	if status == nil {
		return false
	}
	for _, c := range status.Conditions {
		if c.Type == corev1.AllContainersRestarting && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
