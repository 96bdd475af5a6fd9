package podplan

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// sandboxDecision is whether the pod needs a new sandbox.
type sandboxDecision struct {
	create bool
	// attempt is the attempt of the sandbox to create (create) or of the
	// kept one (!create).
	attempt uint32
	// current is the kept sandbox when !create, else nil.
	current *runtimestate.Sandbox
}

// decideSandbox keeps the latest sandbox only when it is the one ready
// sandbox of the pod, in the network mode the spec asks for, and (for a
// pod-network sandbox) has an IP. Otherwise a new sandbox is needed with the
// next attempt (0 for the very first).
func decideSandbox(pod *corev1.Pod, rt *runtimestate.Pod) sandboxDecision {
	latest := rt.LatestSandbox()
	if latest == nil {
		return sandboxDecision{create: true}
	}
	ready := 0
	for _, s := range rt.Sandboxes {
		if s.State == runtimestate.SandboxReady {
			ready++
		}
	}
	hostNetwork := pod.Spec.HostNetwork
	if ready > 1 ||
		latest.State != runtimestate.SandboxReady ||
		latest.HostNetwork != hostNetwork ||
		(!hostNetwork && len(latest.IPs) == 0) {
		return sandboxDecision{create: true, attempt: latest.Attempt + 1}
	}
	return sandboxDecision{attempt: latest.Attempt, current: latest}
}
