package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// Reasons of a rejection, as upstream's kubelet words them. A resource that
// does not fit has the reason InsufficientResourcePrefix + its name
// ("OutOfcpu", "OutOfhugepages-2Mi", "OutOfexample.com/gpu").
const (
	ReasonPodOSSelectorNodeLabelDoesNotMatch   = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonPodOSNotSupported                    = "PodOSNotSupported"
	ReasonSupplementalGroupsPolicyNotSupported = "SupplementalGroupsPolicyNotSupported"
	ReasonUnexpectedAdmissionError             = "UnexpectedAdmissionError"

	InsufficientResourcePrefix = "OutOf"
	ReasonOutOfCPU             = "OutOfcpu"
	ReasonOutOfMemory          = "OutOfmemory"
	ReasonOutOfEphemeralStore  = "OutOfephemeral-storage"
	ReasonOutOfPods            = "OutOfpods"

	ReasonNodeAffinity    = "NodeAffinity"
	ReasonNodeName        = "NodeName"
	ReasonNodePorts       = "NodePorts"
	ReasonTaintToleration = "TaintToleration"
)

// The scheduler plugins' failure descriptions that upstream's messages
// quote.
const (
	descNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	descNodeName     = "node(s) didn't match the requested node name"
	descNodePorts    = "node(s) didn't have free ports for the requested pod ports"
	descTaints       = "node(s) had taints that the pod didn't tolerate"
)

// Inputs is everything Admit looks at. Admit does not modify it.
type Inputs struct {
	// Pod is the pod to admit: a pod from the API server or a static pod,
	// never a mirror pod. Required.
	Pod *corev1.Pod
	// Node is this node. Nil before the node is registered: then only the
	// checks that need no node run, and MaxPods bounds the pod count.
	Node *corev1.Node
	// Active are the pods already admitted and not terminal (static pods,
	// not their mirror pods). An entry with Pod's UID is ignored.
	Active []*corev1.Pod
	// MaxPods bounds the number of pods when Node is nil; 0 is no bound.
	MaxPods int
}

// Result is Admit's answer. Reason and Message are empty when Admit is
// true.
type Result struct {
	Admit   bool
	Reason  string
	Message string
}

var admitted = Result{Admit: true}

// Admit decides whether the node may run in.Pod, with upstream's checks in
// upstream's order, and returns the first failure.
func Admit(in Inputs) Result {
	if r := checkOS(in.Pod, in.Node); !r.Admit {
		return r
	}
	active := others(in.Pod, in.Active)
	if in.Node == nil {
		if in.MaxPods > 0 && len(active)+1 > in.MaxPods {
			return insufficient(shortfall{name: corev1.ResourcePods, requested: 1, used: int64(len(active)), capacity: int64(in.MaxPods)})
		}
		if !portsFit(in.Pod, active) {
			return predicateFailed(ReasonNodePorts, descNodePorts)
		}
		return admitted
	}
	if short := fit(in.Pod, in.Node, active); len(short) > 0 {
		return insufficient(short[0])
	}
	if !nodeAffinityMatches(in.Pod, in.Node) {
		return predicateFailed(ReasonNodeAffinity, descNodeAffinity)
	}
	if name := in.Pod.Spec.NodeName; name != "" && name != in.Node.Name {
		return predicateFailed(ReasonNodeName, descNodeName)
	}
	if !portsFit(in.Pod, active) {
		return predicateFailed(ReasonNodePorts, descNodePorts)
	}
	if !podutil.IsStatic(in.Pod) && untoleratedNoExecute(in.Pod, in.Node) {
		return predicateFailed(ReasonTaintToleration, descTaints)
	}
	return admitted
}

// others returns active without the pod itself.
func others(pod *corev1.Pod, active []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(active))
	for _, p := range active {
		if p.UID != pod.UID {
			out = append(out, p)
		}
	}
	return out
}

// predicateFailed is upstream's PredicateFailureError as a result.
func predicateFailed(name, desc string) Result {
	return Result{Reason: name, Message: fmt.Sprintf("Predicate %s failed: %s", name, desc)}
}

// insufficient is upstream's InsufficientResourceError as a result.
func insufficient(s shortfall) Result {
	var reason string
	switch s.name {
	case corev1.ResourceCPU:
		reason = ReasonOutOfCPU
	case corev1.ResourceMemory:
		reason = ReasonOutOfMemory
	case corev1.ResourceEphemeralStorage:
		reason = ReasonOutOfEphemeralStore
	case corev1.ResourcePods:
		reason = ReasonOutOfPods
	default:
		reason = InsufficientResourcePrefix + string(s.name)
	}
	return Result{
		Reason: reason,
		Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			s.name, s.requested, s.used, s.capacity),
	}
}
