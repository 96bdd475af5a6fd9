package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/sysctl"
)

// ReasonSysctlForbidden is the reason of a pod refused for its sysctls
// (upstream pkg/kubelet/sysctl ForbiddenReason).
const ReasonSysctlForbidden = "SysctlForbidden"

// Sysctls is upstream's sysctl admit handler (pkg/kubelet/sysctl
// patternAllowlist.Admit): a pod may set only the sysctls allow allows
// (the node's safe sysctls and its allowedUnsafeSysctls, internal/podkit/sysctl),
// and none whose namespace it shares with the host. The caller runs it
// right after the eviction check, as upstream orders its handlers; a pod
// it admits gets its sysctls in its sandbox, unchecked.
func Sysctls(pod *corev1.Pod, allow sysctl.Allowlist) Result {
	if err := allow.Check(pod); err != nil {
		return Result{Reason: ReasonSysctlForbidden, Message: err.Error()}
	}
	return admitted
}
