package podstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// ephemeralStatuses builds status.ephemeralContainerStatuses, in spec
// order, as upstream's convertToAPIContainerStatuses does for ephemeral
// containers: the same states, reasons, image, image ID and container ID
// as a regular container's, a start failure shown while the planner still
// means to start the container (podplan.EphemeralPending), and what the
// prober does not give them: no started flag and never ready. An ephemeral
// container is never restarted, so its restart count stays 0. They count
// neither towards the pod's phase nor its conditions.
func ephemeralStatuses(in *Input, old []corev1.ContainerStatus, hasInit bool) []corev1.ContainerStatus {
	specs := in.Pod.Spec.EphemeralContainers
	if len(specs) == 0 {
		return nil
	}
	defaultReason := defaultWaitingReason(hasInit)
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i := range specs {
		spec := podutil.EphemeralAsContainer(&specs[i])
		oldStatus, _ := statusByName(old, spec.Name)
		instances := in.Runtime.ContainersNamed(spec.Name) // newest first
		s := baseStatus(in, spec, oldStatus, instances, defaultReason)
		s.VolumeMounts = volumeMountStatuses(spec.VolumeMounts)
		s.RestartCount = 0
		var latest *runtimestate.Container
		if len(instances) > 0 {
			latest = instances[0]
		}
		if f, ok := in.Failures[spec.Name]; ok && podplan.EphemeralPending(in.Pod, latest) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: f.Reason, Message: f.Message}}
		}
		out = append(out, s)
	}
	return out
}
