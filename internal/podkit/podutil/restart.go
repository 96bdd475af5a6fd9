package podutil

import corev1 "k8s.io/api/core/v1"

// ContainerShouldRestart reports whether a container that exited with
// exitCode is started again, as upstream's ContainerShouldRestart with
// ContainerRestartRules on (the v1.37 default): the container's
// restartPolicyRules first, in order, the first match deciding (Restart and
// RestartAllContainers restart; a rule matched with another action falls
// through); then the container's restartPolicy; then the pod's (default
// Always). Rules count only with a container-level restartPolicy, as the API
// requires.
func ContainerShouldRestart(c *corev1.Container, spec *corev1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchingRestartRule(c, exitCode); ok {
			switch rule.Action {
			case corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case corev1.ContainerRestartPolicyAlways:
			return true
		case corev1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case corev1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	case corev1.RestartPolicyNever:
		return false
	}
	return true
}

// RestartsAfterKill reports whether a running container that berth kills
// (a failed liveness or startup probe) is started again. No exit code is
// known, so only the container's restartPolicy counts (not its rules), then
// the pod's: restarted unless the effective policy is Never, as upstream.
func RestartsAfterKill(c *corev1.Container, spec *corev1.PodSpec) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != corev1.ContainerRestartPolicyNever
	}
	return spec.RestartPolicy != corev1.RestartPolicyNever
}

// RunsOnce reports whether a container that succeeded is left alone when the
// pod's sandbox is re-created: the effective restart policy is OnFailure
// (the container's own when set, else the pod's), as upstream's
// computePodActions.
func RunsOnce(c *corev1.Container, spec *corev1.PodSpec) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy == corev1.ContainerRestartPolicyOnFailure
	}
	return spec.RestartPolicy == corev1.RestartPolicyOnFailure
}

// IsRestartable reports whether the container may ever be restarted: a
// container-level Restart rule, else a container-level policy other than
// Never, else a pod policy other than Never (upstream's
// IsContainerRestartable).
func IsRestartable(c *corev1.Container, spec *corev1.PodSpec) bool {
	if c.RestartPolicy != nil {
		for _, r := range c.RestartPolicyRules {
			if r.Action == corev1.ContainerRestartRuleActionRestart {
				return true
			}
		}
		return *c.RestartPolicy != corev1.ContainerRestartPolicyNever
	}
	return spec.RestartPolicy != corev1.RestartPolicyNever
}

// MatchingRestartRule returns the first of the container's
// restartPolicyRules that matches exitCode.
func MatchingRestartRule(c *corev1.Container, exitCode int32) (corev1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		in := false
		for _, v := range r.ExitCodes.Values {
			if v == exitCode {
				in = true
				break
			}
		}
		switch r.ExitCodes.Operator {
		case corev1.ContainerRestartRuleOnExitCodesOpIn:
			if in {
				return r, true
			}
		case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !in {
				return r, true
			}
		}
	}
	return corev1.ContainerRestartRule{}, false
}
