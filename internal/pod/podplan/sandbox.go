package podplan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Why a new sandbox is needed (SandboxVerdict.Reason): berth's reasons for
// the pod's PodReadyToStartContainers condition, which upstream leaves
// empty (docs/why-waiting.md).
const (
	// SandboxReasonCreating: the pod has no sandbox yet.
	SandboxReasonCreating = "CreatingSandbox"
	// SandboxReasonNotReady: the latest sandbox is not ready (it exited,
	// or the runtime stopped it).
	SandboxReasonNotReady = "SandboxNotReady"
	// SandboxReasonNetworkChanged: the latest sandbox's network mode is not
	// the one spec.hostNetwork asks for.
	SandboxReasonNetworkChanged = "SandboxNetworkChanged"
	// SandboxReasonNoIP: the latest pod-network sandbox has no IP.
	SandboxReasonNoIP = "SandboxNoIP"
	// SandboxReasonMultipleReady: more than one sandbox of the pod is
	// ready.
	SandboxReasonMultipleReady = "MultipleSandboxesReady"
)

// SandboxVerdict is whether the pod's latest sandbox can be kept and, when
// it cannot, why (Reason and a one-line Message, "" when kept). The
// planner's sandbox decision (Compute) and the status generator's
// PodReadyToStartContainers condition both take it from DecideSandbox.
type SandboxVerdict struct {
	Reason  string
	Message string
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
// next attempt (0 for the very first). It is the one answer to "is the
// pod's sandbox ready to start containers?".
func DecideSandbox(pod *corev1.Pod, rt *runtimestate.Pod) SandboxVerdict {
	latest := rt.LatestSandbox()
	if latest == nil {
		return SandboxVerdict{Reason: SandboxReasonCreating, Message: "creating the pod sandbox"}
	}
	ready := 0
	for _, s := range rt.Sandboxes {
		if s.State == runtimestate.SandboxReady {
			ready++
		}
	}
	hostNetwork := pod.Spec.HostNetwork
	next := latest.Attempt + 1
	id := shortID(latest.ID)
	switch {
	case ready > 1:
		return SandboxVerdict{Reason: SandboxReasonMultipleReady, Attempt: next,
			Message: fmt.Sprintf("%d sandboxes are ready, one is wanted: re-creating the pod sandbox (attempt %d)", ready, next)}
	case latest.State != runtimestate.SandboxReady:
		return SandboxVerdict{Reason: SandboxReasonNotReady, Attempt: next,
			Message: fmt.Sprintf("sandbox %s is not ready: re-creating the pod sandbox (attempt %d)", id, next)}
	case latest.HostNetwork != hostNetwork:
		return SandboxVerdict{Reason: SandboxReasonNetworkChanged, Attempt: next,
			Message: fmt.Sprintf("sandbox %s has hostNetwork %t, the pod wants %t: re-creating the pod sandbox (attempt %d)", id, latest.HostNetwork, hostNetwork, next)}
	case !hostNetwork && len(latest.IPs) == 0:
		return SandboxVerdict{Reason: SandboxReasonNoIP, Attempt: next,
			Message: fmt.Sprintf("sandbox %s has no pod IP: re-creating the pod sandbox (attempt %d)", id, next)}
	}
	return SandboxVerdict{Attempt: latest.Attempt, Current: latest}
}

// shortID is a runtime ID cut to the 12 characters people know it by.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
