package config

import (
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// validateLimits checks the node's limits that upstream validates and
// berth honours, with upstream's bounds (pkg/kubelet/apis/config/validation).
func validateLimits(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	for name, v := range map[string]int64{
		"podsPerCore":     int64(kc.PodsPerCore),
		"maxOpenFiles":    kc.MaxOpenFiles,
		"registryPullQPS": int64(ptr.Deref(kc.RegistryPullQPS, 0)),
		"registryBurst":   int64(kc.RegistryBurst),
	} {
		if v < 0 {
			ps = append(ps, fieldProblem(name, "invalid value %d: must not be negative", v))
		}
	}
	// KubeletCrashLoopBackOffMax is on (berth refuses it off), so the
	// period is set (defaults) and must lie within upstream's bounds, which
	// upstream checks in whole milliseconds.
	if p := kc.CrashLoopBackOff.MaxContainerRestartPeriod; p != nil {
		if ms := p.Milliseconds(); ms < 1000 || ms > 300000 {
			ps = append(ps, fieldProblem("crashLoopBackOff.maxContainerRestartPeriod", "invalid value %q: must be between 1s and 300s", p.Duration.String()))
		}
	}
	return ps
}
