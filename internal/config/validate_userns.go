package config

import (
	"math"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// userNsUnitLength is the granularity of user namespace ID ranges
// (upstream's validation userNsUnitLength; internal/node/userns has the same).
const userNsUnitLength = 65536

// validateUserNamespaces checks userNamespaces.idsPerPod as upstream's
// validateKubeletOSConfiguration, with its wording: at least 65536, a
// multiple of it, at most 2^32-1.
func validateUserNamespaces(u *kubeletconfigv1beta1.UserNamespaces) []problem {
	if u == nil || u.IDsPerPod == nil {
		return nil
	}
	n := *u.IDsPerPod
	switch {
	case n < userNsUnitLength:
		return []problem{fieldProblem("userNamespaces", "invalid value %d: userNamespaces.idsPerPod must not be less than %d", n, userNsUnitLength)}
	case n%userNsUnitLength != 0:
		return []problem{fieldProblem("userNamespaces", "invalid value %d: userNamespaces.idsPerPod must be a multiple of %d", n, userNsUnitLength)}
	case n > math.MaxUint32:
		return []problem{fieldProblem("userNamespaces", "invalid value %d: userNamespaces.idsPerPod must not be more than %d", n, int64(math.MaxUint32))}
	}
	return nil
}

// IDsPerPod is the IDs each pod's user namespace maps:
// userNamespaces.idsPerPod, or 0 when unset (internal/node/userns then uses
// upstream's default, 65536).
func (c *Config) IDsPerPod() uint32 {
	if u := c.Kubelet.UserNamespaces; u != nil && u.IDsPerPod != nil {
		return uint32(*u.IDsPerPod) // validated: at most MaxUint32
	}
	return 0
}
