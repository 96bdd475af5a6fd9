package config

import (
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// validateLimits checks the node's limits that upstream validates and
// berth honours, with upstream's bounds (pkg/kubelet/apis/config/validation).
func validateLimits(kc *kubeletconfigv1beta1.KubeletConfiguration) []problem {
	var ps []problem
	for name, v := range map[string]int64{
		"podsPerCore":  int64(kc.PodsPerCore),
		"maxOpenFiles": kc.MaxOpenFiles,
	} {
		if v < 0 {
			ps = append(ps, fieldProblem(name, "invalid value %d: must not be negative", v))
		}
	}
	return ps
}
