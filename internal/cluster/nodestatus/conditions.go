package nodestatus

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Ready condition's reasons and message, as upstream.
const (
	ReasonReady    = "KubeletReady"
	ReasonNotReady = "KubeletNotReady"
	MessageReady   = "kubelet is posting ready status"
	// MessageShuttingDown is upstream's node shutdown manager's error.
	MessageShuttingDown = "node is shutting down"
)

// RuntimeNotReadyMessage is upstream's message for a runtime whose
// RuntimeReady condition is false.
func RuntimeNotReadyMessage(reason, message string) string {
	return fmt.Sprintf("container runtime not ready: RuntimeReady=false reason:%s message:%s", reason, message)
}

// NetworkNotReadyMessage is upstream's message for a runtime whose
// NetworkReady condition is false.
func NetworkNotReadyMessage(reason, message string) string {
	return fmt.Sprintf("container runtime network not ready: NetworkReady=false reason:%s message:%s", reason, message)
}

// pressure describes one of the pressure conditions: its type, the
// reason and message in each state, and the event reasons.
type pressure struct {
	typ                     corev1.NodeConditionType
	trueReason, trueMessage string
	trueEvent               string
	falseReason, falseMsg   string
	falseEvent              string
}

// MemoryPressureCondition sets MemoryPressure from in.Pressure.Memory.
func MemoryPressureCondition(node *corev1.Node, in Inputs) []Event {
	return setPressure(node, in, in.Pressure.Memory, pressure{
		typ:        corev1.NodeMemoryPressure,
		trueReason: "KubeletHasInsufficientMemory", trueMessage: "kubelet has insufficient memory available",
		trueEvent:   "NodeHasInsufficientMemory",
		falseReason: "KubeletHasSufficientMemory", falseMsg: "kubelet has sufficient memory available",
		falseEvent: "NodeHasSufficientMemory",
	})
}

// DiskPressureCondition sets DiskPressure from in.Pressure.Disk.
func DiskPressureCondition(node *corev1.Node, in Inputs) []Event {
	return setPressure(node, in, in.Pressure.Disk, pressure{
		typ:        corev1.NodeDiskPressure,
		trueReason: "KubeletHasDiskPressure", trueMessage: "kubelet has disk pressure",
		trueEvent:   "NodeHasDiskPressure",
		falseReason: "KubeletHasNoDiskPressure", falseMsg: "kubelet has no disk pressure",
		falseEvent: "NodeHasNoDiskPressure",
	})
}

// PIDPressureCondition sets PIDPressure from in.Pressure.PID.
func PIDPressureCondition(node *corev1.Node, in Inputs) []Event {
	return setPressure(node, in, in.Pressure.PID, pressure{
		typ:        corev1.NodePIDPressure,
		trueReason: "KubeletHasInsufficientPID", trueMessage: "kubelet has insufficient PID available",
		trueEvent:   "NodeHasInsufficientPID",
		falseReason: "KubeletHasSufficientPID", falseMsg: "kubelet has sufficient PID available",
		falseEvent: "NodeHasSufficientPID",
	})
}

// setPressure updates (or appends) one pressure condition: the heartbeat
// always moves; status, reason, message and transition time change only
// when the status does, and that change is an event. A new condition
// starts from Unknown, so its first status is a change.
func setPressure(node *corev1.Node, in Inputs, under bool, p pressure) []Event {
	now := metav1.NewTime(in.Now)
	idx := conditionIndex(node, p.typ)
	if idx < 0 {
		node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: p.typ, Status: corev1.ConditionUnknown})
		idx = len(node.Status.Conditions) - 1
	}
	c := &node.Status.Conditions[idx]
	c.LastHeartbeatTime = now
	want, reason, msg, event := corev1.ConditionFalse, p.falseReason, p.falseMsg, p.falseEvent
	if under {
		want, reason, msg, event = corev1.ConditionTrue, p.trueReason, p.trueMessage, p.trueEvent
	}
	if c.Status == want {
		return nil
	}
	c.Status, c.Reason, c.Message, c.LastTransitionTime = want, reason, msg, now
	return []Event{statusEvent(in.NodeName, event)}
}

// ReadyCondition sets Ready: True with KubeletReady, or False with
// KubeletNotReady and every reason the node is not ready (the runtime, its
// network, its storage, missing capacity), joined the way upstream aggregates errors.
// The transition time moves only when the status changes; a change of an
// existing condition is a NodeReady or NodeNotReady event.
func ReadyCondition(node *corev1.Node, in Inputs) []Event {
	now := metav1.NewTime(in.Now)
	next := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: ReasonReady, Message: MessageReady, LastHeartbeatTime: now,
	}
	if problems := notReadyReasons(node, in); len(problems) > 0 {
		next.Status, next.Reason, next.Message = corev1.ConditionFalse, ReasonNotReady, aggregate(problems)
	}
	idx := conditionIndex(node, corev1.NodeReady)
	if idx < 0 {
		next.LastTransitionTime = now
		node.Status.Conditions = append(node.Status.Conditions, next)
		return nil
	}
	prev := node.Status.Conditions[idx]
	node.Status.Conditions[idx] = next
	if prev.Status == next.Status {
		node.Status.Conditions[idx].LastTransitionTime = prev.LastTransitionTime
		return nil
	}
	node.Status.Conditions[idx].LastTransitionTime = now
	if next.Status == corev1.ConditionTrue {
		return []Event{statusEvent(in.NodeName, "NodeReady")}
	}
	return []Event{statusEvent(in.NodeName, "NodeNotReady")}
}

// notReadyReasons lists why the node is not ready, in upstream's order.
func notReadyReasons(node *corev1.Node, in Inputs) []string {
	var out []string
	if !in.RuntimeReady {
		out = append(out, orDefault(in.RuntimeMessage, "container runtime is down"))
	}
	if !in.NetworkReady {
		out = append(out, orDefault(in.NetworkMessage, "container runtime network not ready"))
	}
	if in.StorageMessage != "" {
		out = append(out, in.StorageMessage)
	}
	if in.ShuttingDown {
		out = append(out, MessageShuttingDown)
	}
	var missing []string
	required := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods}
	if in.LocalStorageCapacityIsolation {
		required = append(required, corev1.ResourceEphemeralStorage)
	}
	for _, r := range required {
		if _, ok := node.Status.Capacity[r]; !ok {
			missing = append(missing, string(r))
		}
	}
	if len(missing) > 0 {
		out = append(out, "missing node capacity for resources: "+strings.Join(missing, ", "))
	}
	return out
}

// aggregate joins messages as apimachinery's error aggregate prints them:
// one message alone, several in brackets, duplicates once.
func aggregate(msgs []string) string {
	seen := map[string]bool{}
	var uniq []string
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	if len(uniq) == 1 {
		return uniq[0]
	}
	return "[" + strings.Join(uniq, ", ") + "]"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func conditionIndex(node *corev1.Node, t corev1.NodeConditionType) int {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return i
		}
	}
	return -1
}

// statusEvent is upstream's "Node <name> status is now: <reason>" event.
func statusEvent(nodeName, reason string) Event {
	return Event{
		Type:    corev1.EventTypeNormal,
		Reason:  reason,
		Message: fmt.Sprintf("Node %s status is now: %s", nodeName, reason),
	}
}
