package podplan

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Why a new sandbox is needed (SandboxVerdict.Why): upstream's messages
// of a False PodReadyToStartContainers condition (pkg/kubelet/types,
// returned by kuberuntime/util.PodSandboxChanged); upstream_test.go pins
// them.
const (
	SandboxNotReadyMsgNoPodSandbox         = "no pod sandbox exists"
	SandboxNotReadyMsgMultipleSandboxes    = "multiple pod sandboxes are ready and need to be reconciled"
	SandboxNotReadyMsgSandboxNotReady      = "pod sandbox is not ready"
	SandboxNotReadyMsgNetworkNamespaceMode = "network namespace mode changed and sandbox needs to be recreated"
	SandboxNotReadyMsgNoIPAddress          = "pod sandbox has no IP address"
)

// SandboxVerdict is whether the pod's latest sandbox can be kept and, when
// it cannot, why. The planner's sandbox decision (Compute) and the status
// generator's PodReadyToStartContainers condition both take it from
// DecideSandbox.
type SandboxVerdict struct {
	// Why is "" when the sandbox is kept, else one of the
	// SandboxNotReadyMsg* messages.
	Why string
	// Attempt is the attempt of the sandbox to create, or of the kept one.
	Attempt uint32
	// Current is the kept sandbox; nil when a new one is needed.
	Current *runtimestate.Sandbox
}

// Create reports whether a new sandbox is needed.
func (v SandboxVerdict) Create() bool { return v.Current == nil }

// DecideSandbox keeps the latest sandbox only when it is the one ready
// sandbox of the pod, in the network mode the spec asks for, and (for a
// pod-network sandbox) has an IP. Otherwise a new sandbox is needed with the
// next attempt (0 for the very first). The checks come in upstream's order
// (PodSandboxChanged), so Why is upstream's. It is the one answer to "is
// the pod's sandbox ready to start containers?".
func DecideSandbox(pod *corev1.Pod, rt *runtimestate.Pod) SandboxVerdict {
	latest := rt.LatestSandbox()
	if latest == nil {
		return SandboxVerdict{Why: SandboxNotReadyMsgNoPodSandbox}
	}
	ready := 0
	for _, s := range rt.Sandboxes {
		if s.State == runtimestate.SandboxReady {
			ready++
		}
	}
	hostNetwork := pod.Spec.HostNetwork
	why := ""
	switch {
	case ready > 1:
		why = SandboxNotReadyMsgMultipleSandboxes
	case latest.State != runtimestate.SandboxReady:
		why = SandboxNotReadyMsgSandboxNotReady
	case latest.HostNetwork != hostNetwork:
		why = SandboxNotReadyMsgNetworkNamespaceMode
	case !hostNetwork && len(latest.IPs) == 0:
		why = SandboxNotReadyMsgNoIPAddress
	default:
		return SandboxVerdict{Attempt: latest.Attempt, Current: latest}
	}
	return SandboxVerdict{Why: why, Attempt: latest.Attempt + 1}
}
