package podstatus

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berthk8s/berth/internal/pod/podplan"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Waiting and terminated reasons berth writes itself, as upstream.
const (
	ReasonContainerCreating      = "ContainerCreating"
	ReasonPodInitializing        = "PodInitializing"
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
	ReasonCompleted              = "Completed"
	ReasonError                  = "Error"
	// ReasonRestartingAllContainers: the container was removed by a
	// RestartAllContainers reset (waiting, and its last termination).
	ReasonRestartingAllContainers = "RestartingAllContainers"

	msgUnknownWhenTerminated = "The container could not be located when the pod was terminated"
	msgUnknownWhenDeleted    = "The container could not be located when the pod was deleted.  The container used to be Running"
	msgInitInferred          = "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"
	msgRestartingAll         = "The container is removed because RestartAllContainers in place"
	exitCodeUnknown          = 137
)

// containerStatuses builds the statuses of specs (the regular or the init
// containers), in spec order, following upstream convertToAPIContainerStatuses
// (with the resources of a container the runtime has: resources.go) and
// then the prober's started/ready rules.
func containerStatuses(in *Input, old []corev1.ContainerStatus, specs []corev1.Container, hasInit, isInit bool) []corev1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	defaultReason := defaultWaitingReason(hasInit)
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i := range specs {
		spec := &specs[i]
		oldStatus, _ := statusByName(old, spec.Name)
		instances := in.Runtime.ContainersNamed(spec.Name) // newest first
		s := baseStatus(in, spec, oldStatus, instances, defaultReason)
		s.VolumeMounts = volumeMountStatuses(spec.VolumeMounts)
		if len(instances) > 0 {
			containerResources(in, &s, spec, instances[0], oldStatus)
		}
		applyStartFailure(in, &s, spec, instances, isInit)
		applyProbes(in, &s, spec, isInit)
		out = append(out, s)
	}
	return out
}

// defaultWaitingReason is the waiting reason of a container the runtime
// has no instance of: PodInitializing in a pod with init containers, else
// ContainerCreating (upstream's defaultWaitingState).
func defaultWaitingReason(hasInit bool) string {
	if hasInit {
		return ReasonPodInitializing
	}
	return ReasonContainerCreating
}

// baseStatus is the status from the runtime's two newest instances of the
// container, or, when the runtime has none, from the previous status.
func baseStatus(in *Input, spec *corev1.Container, old *corev1.ContainerStatus, instances []*runtimestate.Container, defaultReason string) corev1.ContainerStatus {
	if len(instances) > 0 {
		s := convert(in, spec, instances[0], old)
		if len(instances) > 1 {
			s.LastTerminationState = convert(in, spec, instances[1], nil).State
		}
		return s
	}

	s := corev1.ContainerStatus{
		Name:  spec.Name,
		Image: spec.Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: defaultReason}},
	}
	if old == nil {
		return s
	}
	if in.RestartAll != podplan.RestartAllNone && old.State.Waiting == nil {
		return removedByReset(s, old)
	}
	if old.State.Terminated != nil {
		// The runtime removed the container: its last known end stands.
		return *old.DeepCopy()
	}
	s.RestartCount = old.RestartCount
	s.LastTerminationState = *old.LastTerminationState.DeepCopy()
	if old.State.Running != nil && s.LastTerminationState.Terminated == nil {
		// It ran and vanished: record that it stopped, so the pod does not
		// fall back to Pending as if it never ran.
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
			Reason:   ReasonContainerStatusUnknown,
			Message:  msgUnknownWhenDeleted,
			ExitCode: exitCodeUnknown,
		}
		if in.Pod.DeletionTimestamp == nil {
			s.RestartCount++
		}
	}
	return s
}

// removedByReset is the status of a container that ran (or was stopped)
// and that a RestartAllContainers reset removed: waiting, its last
// termination RestartingAllContainers (exit code 137), one more restart.
// A terminated one keeps the rest of its last status, as upstream.
func removedByReset(s corev1.ContainerStatus, old *corev1.ContainerStatus) corev1.ContainerStatus {
	if old.State.Terminated != nil {
		s = *old.DeepCopy()
	}
	s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: ReasonRestartingAllContainers, Message: msgRestartingAll}}
	s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: ReasonRestartingAllContainers, Message: msgRestartingAll, ExitCode: exitCodeUnknown}}
	s.RestartCount = old.RestartCount + 1
	return s
}

// carryOver takes from the container's previous status what the runtime
// may have lost (upstream's convertContainerStatus with
// RestartAllContainersOnContainerExits): the restart count never goes
// backwards, and the last termination of an instance that is gone (a
// RestartAllContainers reset removes every instance) stays the last
// termination of the next one.
func carryOver(s *corev1.ContainerStatus, old *corev1.ContainerStatus) {
	if old.RestartCount > s.RestartCount {
		s.RestartCount = old.RestartCount
	}
	switch {
	case old.ContainerID != s.ContainerID && old.State.Terminated != nil:
		s.LastTerminationState.Terminated = old.State.Terminated.DeepCopy()
	case old.LastTerminationState.Terminated != nil:
		s.LastTerminationState.Terminated = old.LastTerminationState.Terminated.DeepCopy()
	}
}

// convert turns one runtime container into a status; old is the
// container's previous status when c is its newest instance, else nil.
func convert(in *Input, spec *corev1.Container, c *runtimestate.Container, old *corev1.ContainerStatus) corev1.ContainerStatus {
	cid := in.RuntimeName + "://" + c.ID
	s := corev1.ContainerStatus{
		Name:         c.Name,
		RestartCount: int32(c.RestartCount),
		Image:        c.Image,
		ImageID:      c.ImageRef,
		ContainerID:  cid,
	}
	if s.Image == "" {
		s.Image = spec.Image
	}
	if s.ImageID == "" {
		s.ImageID = c.ImageID
	}
	if old != nil {
		carryOver(&s, old)
	}
	switch {
	case c.State == runtimestate.ContainerRunning:
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.StartedAt)}
		if old != nil && old.State.Terminated != nil && old.RestartCount >= int32(c.RestartCount) {
			// Running again after a termination the runtime no longer
			// counts (its instances were removed): one more restart.
			s.RestartCount = old.RestartCount + 1
		}
	case c.State == runtimestate.ContainerCreated:
		s.State.Waiting = &corev1.ContainerStateWaiting{}
	case c.State == runtimestate.ContainerExited:
		reason := c.Reason
		if reason == "" {
			reason = ReasonCompleted
			if c.ExitCode != 0 {
				reason = ReasonError
			}
		}
		s.State.Terminated = &corev1.ContainerStateTerminated{
			ExitCode:    c.ExitCode,
			Reason:      reason,
			Message:     c.Message,
			StartedAt:   metav1.NewTime(c.StartedAt),
			FinishedAt:  metav1.NewTime(c.FinishedAt),
			ContainerID: cid,
		}
	case old != nil && old.State.Running != nil:
		// Unknown now, running before: it stopped without us seeing how.
		// Not "waiting": that would let a run-once pod run twice.
		reason := ReasonContainerStatusUnknown
		if in.RestartAll != podplan.RestartAllNone {
			reason = ReasonRestartingAllContainers
		}
		s.State.Terminated = &corev1.ContainerStateTerminated{
			Reason:   reason,
			Message:  msgUnknownWhenTerminated,
			ExitCode: exitCodeUnknown,
		}
		s.RestartCount = old.RestartCount + 1
	default:
		s.State.Waiting = &corev1.ContainerStateWaiting{}
	}
	return s
}

// applyStartFailure shows why a container that should be (re)started is
// not running: the start failure of the last sync becomes the waiting
// state, and a terminated state moves to lastState.
func applyStartFailure(in *Input, s *corev1.ContainerStatus, spec *corev1.Container, instances []*runtimestate.Container, isInit bool) {
	var latest *runtimestate.Container
	if len(instances) > 0 {
		latest = instances[0]
	}
	if isInit {
		if !podutil.IsSidecar(spec) && latest != nil && latest.State == runtimestate.ContainerExited && latest.ExitCode == 0 {
			return // done; never restarted (a sidecar is)
		}
		if latest == nil && !podutil.IsSidecar(spec) && s.State.Waiting != nil && anyRegularContainerCreated(in) {
			// Removed from the runtime, but regular containers exist: it
			// must have succeeded.
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason:   ReasonCompleted,
				Message:  msgInitInferred,
				ExitCode: 0,
			}}
			return
		}
	}
	if !podplan.ShouldContainerBeRestarted(in.Pod, spec, latest) {
		return
	}
	f, ok := in.Failures[spec.Name]
	if !ok {
		return
	}
	if s.State.Terminated != nil {
		s.LastTerminationState = s.State
	}
	s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: f.Reason, Message: f.Message}}
}

// applyProbes sets Started and Ready as upstream's prober does. Started is
// always set. A regular container (or sidecar) is ready when it runs, has
// started and passes its readiness probe (if any); a regular init container
// is ready once it exited 0.
func applyProbes(in *Input, s *corev1.ContainerStatus, spec *corev1.Container, isInit bool) {
	started := s.State.Running != nil
	if r, ok := in.Startup[s.Name]; ok && started {
		started = r
	}
	s.Started = &started
	s.Ready = false
	if isInit && !podutil.IsSidecar(spec) {
		s.Ready = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
		return
	}
	if !started {
		return
	}
	ready := true
	if r, ok := in.Readiness[s.Name]; ok {
		ready = r
	}
	s.Ready = ready
}

// anyRegularContainerCreated: the runtime holds a regular container in any
// known state, so the pod got past its init containers.
func anyRegularContainerCreated(in *Input) bool {
	for _, spec := range in.Pod.Spec.Containers {
		c := in.Runtime.LatestContainer(spec.Name)
		if c != nil && c.State != runtimestate.ContainerUnknown {
			return true
		}
	}
	return false
}

// volumeMountStatuses reports the container's mounts as upstream does
// (status.volumeMounts). Read-only mounts carry their recursive read-only
// mode: Enabled only when the spec demands it (the runtime could not have
// started the container otherwise), else Disabled; berth does not yet ask
// the runtime whether IfPossible could be honoured.
func volumeMountStatuses(mounts []corev1.VolumeMount) []corev1.VolumeMountStatus {
	if len(mounts) == 0 {
		return nil
	}
	out := make([]corev1.VolumeMountStatus, 0, len(mounts))
	for _, m := range mounts {
		vs := corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := corev1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
				mode = corev1.RecursiveReadOnlyEnabled
			}
			vs.RecursiveReadOnly = &mode
		}
		out = append(out, vs)
	}
	return out
}
