package allocation

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// The resize events' reasons, as upstream's (pkg/kubelet/events).
const (
	EventResizeDeferred   = "ResizeDeferred"
	EventResizeInfeasible = "ResizeInfeasible"
	EventResizeCompleted  = "ResizeCompleted"
	EventResizeStarted    = "ResizeStarted"
	EventResizeError      = "ResizeError"
)

// The resize events' message prefixes, as upstream's.
const (
	MessageResizeStarted   = "Pod resize started"
	MessageResizeCompleted = "Pod resize completed"
	MessageResizeError     = "Pod resize error"
)

type containerAllocation struct {
	Name      string                      `json:"name"`
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

type resourceSummary struct {
	InitContainers []containerAllocation `json:"initContainers,omitempty"`
	Containers     []containerAllocation `json:"containers,omitempty"`
	Generation     int64                 `json:"generation"`
	Error          string                `json:"error,omitempty"`
}

// EventMessage is upstream's resize event message: the prefix, then the
// pod's container resources, the generation and the error as JSON
// (events.podResizeMessage).
func EventMessage(pod *corev1.Pod, generation int64, errorMessage, prefix string) string {
	s := resourceSummary{Generation: generation, Error: errorMessage}
	for _, c := range pod.Spec.InitContainers {
		s.InitContainers = append(s.InitContainers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		s.Containers = append(s.Containers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	b, err := json.Marshal(s)
	if err != nil {
		return prefix
	}
	return fmt.Sprintf("%s: %s", prefix, b)
}
