package sysctl

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// Check refuses the pod's sysctls as upstream's sysctl admission does (its
// reason is SysctlForbidden): a sysctl outside a, or one whose namespace the
// pod shares with the host (network, IPC, or user: pods share the host's
// user namespace unless hostUsers is false). The error is upstream's
// message; nil means every sysctl may be set.
func (a Allowlist) Check(pod *corev1.Pod) error {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, s := range sc.Sysctls {
		name := utilsysctl.NormalizeName(s.Name)
		ns, ok := a.lookup(name)
		switch {
		case !ok:
			return fmt.Errorf("forbidden sysctl: %q not allowlisted", name)
		case ns == utilsysctl.IPCNamespace && pod.Spec.HostIPC,
			ns == utilsysctl.NetNamespace && pod.Spec.HostNetwork,
			ns == utilsysctl.UserNamespace && hostUsers:
			return fmt.Errorf("forbidden sysctl: %q not allowed with host %s enabled", name, ns)
		}
	}
	return nil
}
