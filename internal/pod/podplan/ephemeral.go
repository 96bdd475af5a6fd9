package podplan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// WaitingReasonCreateContainerConfigError is the Waiting reason of an
// ephemeral container whose targetContainerName does not run (upstream's
// ErrCreateContainerConfig, which startContainer returns when it cannot
// resolve the target).
const WaitingReasonCreateContainerConfigError = "CreateContainerConfigError"

// EphemeralStart is one ephemeral container to start.
type EphemeralStart struct {
	// Index is into Spec.EphemeralContainers.
	Index int
	// TargetID is the runtime ID of the running instance of the
	// container's targetContainerName, whose PID namespace it joins; ""
	// when it names none.
	TargetID string
}

// EphemeralPending reports whether an ephemeral container is still to be
// started: it never ran (latest, its newest runtime instance, is nil) and
// the pod is not being deleted. Ephemeral containers are never restarted:
// once an instance exists, its exit is final. The planner starts with it
// and the status generator asks it whether a start failure still applies.
func EphemeralPending(pod *corev1.Pod, latest *runtimestate.Container) bool {
	return pod.DeletionTimestamp == nil && latest == nil
}

// planEphemeral picks the ephemeral containers to start in the kept,
// ready sandbox sandboxID (upstream computePodActions'
// EphemeralContainersToStart): every pending one, whether or not the pod
// is initialized. One with a targetContainerName waits
// (CreateContainerConfigError) until the target's newest instance runs in
// that sandbox, since it joins that instance's PID namespace.
func (p *planner) planEphemeral(a *Actions, sandboxID string) {
	for i := range p.pod.Spec.EphemeralContainers {
		ec := &p.pod.Spec.EphemeralContainers[i]
		if !EphemeralPending(p.pod, p.rt.LatestContainer(ec.Name)) {
			continue
		}
		start := EphemeralStart{Index: i}
		if name := ec.TargetContainerName; name != "" {
			target := p.rt.LatestContainer(name)
			switch {
			case target == nil || target.SandboxID != sandboxID:
				p.waiting[ec.Name] = Waiting{Reason: WaitingReasonCreateContainerConfigError,
					Message: fmt.Sprintf("unable to find target container %s", name)}
				continue
			case target.State != runtimestate.ContainerRunning:
				p.waiting[ec.Name] = Waiting{Reason: WaitingReasonCreateContainerConfigError,
					Message: fmt.Sprintf("target container %s is not running", name)}
				continue
			}
			start.TargetID = target.ID
		}
		a.EphemeralContainers = append(a.EphemeralContainers, start)
	}
}
