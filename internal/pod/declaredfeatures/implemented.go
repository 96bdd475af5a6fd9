package declaredfeatures

import (
	"k8s.io/component-helpers/nodedeclaredfeatures/features/dranodeallocatableresources"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/draoptionalnodeoperations"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/extendwebsocketstokubelet"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/inplacepodresize"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/restartallcontainers"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/usernamespaceshostnetwork"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/volumebindmountoptions"
)

// Implemented reports whether berth really does what the declared feature
// name announces. The library discovers a feature from the gates and the
// runtime alone, as for upstream's kubelet, which implements all of them;
// berth does not, and a feature it declares without doing it would have
// the scheduler and the API server send it pods (or resizes) it then
// mishandles. A name berth has not decided on (a feature of a newer
// library) is not implemented: it is declared only once someone adds it
// here (a test lists every feature of the library's registry).
func Implemented(name string) bool {
	yes, _ := decide(name)
	return yes
}

// decide is the decision per feature: whether berth implements it, and
// whether it has been decided at all.
func decide(name string) (implemented, decided bool) {
	switch name {
	case restartallcontainers.RestartAllContainersOnContainerExits:
		// Yes: restartPolicyRules with the RestartAllContainers action are
		// honoured (internal/podkit/podutil restartall.go, the pod worker); the
		// gate is one berth refuses to turn off.
		return true, true
	case extendwebsocketstokubelet.ExtendWebSocketsToKubeletFeatureGate:
		// Yes: exec, attach and port-forward are served over WebSockets
		// (internal/serve/streaming); the gate is one berth refuses to turn off.
		return true, true
	case inplacepodresize.IPPRPodLevelResourcesFeatureGate,
		inplacepodresize.IPPRInitContainersFeatureGate:
		// Yes: in-place resize (internal/pod/allocation, podplan resize.go)
		// covers pod-level resources (the pod cgroup, the containers
		// that inherit its limits) and init containers (a sidecar is
		// updated in place, an ordinary one starts with its allocation).
		return true, true
	case inplacepodresize.IPPRMemoryBackedVolumesFeatureGate:
		// No: a memory-backed emptyDir's sizeLimit is not resized (the
		// alpha gate is off; such a resize is Infeasible).
		return false, true
	case usernamespaceshostnetwork.UserNamespacesHostNetworkSupport:
		// No: berth refuses the alpha gate on, and does not run a
		// hostNetwork pod in a user namespace.
		return false, true
	case volumebindmountoptions.VolumeBindMountOptionsFeatureName:
		// No: berth does not pass volumeMounts' bindMountOptions to the
		// runtime.
		return false, true
	case dranodeallocatableresources.DRANodeAllocatableResourcesFeature,
		draoptionalnodeoperations.DRAOptionalNodeOperationsFeatureGate:
		// No: berth has no dynamic resource allocation.
		return false, true
	default:
		return false, false
	}
}

// Declare returns the discovered features berth implements, in their
// order: discovered ∩ implemented. It is the only place that narrows the
// library's discovery.
func Declare(discovered []string) []string {
	var out []string
	for _, name := range discovered {
		if Implemented(name) {
			out = append(out, name)
		}
	}
	return out
}
