package podplan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// Resize is the plan's part of an in-place resize (InPlacePodVerticalScaling):
// what to update so that the running pod has its allocated resources
// (Inputs.Pod carries the allocation; Inputs.Actuated what berth last set).
type Resize struct {
	// Containers are running containers to update in place to their
	// allocated resources (UpdateContainerResources): their cpu or memory
	// changed and no resizePolicy of a changed resource asks for a
	// restart. Those that do are in KillContainers with
	// KillReasonResize and started again.
	Containers []ResizeContainer
	// PodCgroup: the pod cgroup must be set to the allocated pod's
	// resources before containers start or are updated (upstream's
	// UpdatePodResources and UpdatePodLevelResources): a container is
	// resized or restarted for a resize, a container starts with other
	// resources than it last ran with, or the pod-level resources
	// changed.
	PodCgroup bool
	// InProgress is upstream's IsPodResizeInProgress before this plan
	// runs: a running regular container or sidecar, or the pod, has other
	// resources than allocated. It drives the PodResizeInProgress
	// condition.
	InProgress bool
}

// ResizeContainer is one running container to update in place.
type ResizeContainer struct {
	ContainerRef
	// Init says Index is into Spec.InitContainers (a sidecar), else into
	// Spec.Containers.
	Init  bool
	Index int
}

// sized is what a resize compares: a container's cpu and memory, limits
// falling back to the pod-level ones (upstream's
// containerResourcesFromRequirements with pod-level resources).
type sized struct {
	cpuRequest, cpuLimit       int64 // millicores
	memoryRequest, memoryLimit int64 // bytes
}

func sizeOf(c corev1.ResourceRequirements, pod *corev1.ResourceRequirements) sized {
	cpuLimit, memoryLimit := podutil.EffectiveLimits(c, pod)
	return sized{
		cpuRequest: c.Requests.Cpu().MilliValue(), cpuLimit: cpuLimit.MilliValue(),
		memoryRequest: c.Requests.Memory().Value(), memoryLimit: memoryLimit.Value(),
	}
}

// podSized is the pod-level resources' cpu and memory.
func podSized(r *corev1.ResourceRequirements) sized {
	if r == nil {
		return sized{}
	}
	return sizeOf(*r, nil)
}

// actuated is what the container last ran with; with nothing recorded
// (Inputs.Actuated nil) it is taken to have its allocation.
func (p *planner) actuated(spec *corev1.Container) sized {
	if p.actuatedRes == nil {
		return sizeOf(spec.Resources, p.pod.Spec.Resources)
	}
	return sizeOf(p.actuatedRes[spec.Name], p.actuatedPod)
}

// resizeVerdict decides about a running container that is kept
// otherwise: nothing, an in-place update, or a restart because a changed
// resource's resizePolicy is RestartContainer (upstream's
// computePodResizeAction).
func (p *planner) resizeVerdict(a *Actions, spec *corev1.Container, c *runtimestate.Container, init bool, idx int) (restart bool) {
	want, have := sizeOf(spec.Resources, p.pod.Spec.Resources), p.actuated(spec)
	if want == have {
		return false
	}
	a.Resize.InProgress, a.Resize.PodCgroup = true, true
	changed := map[corev1.ResourceName]bool{
		corev1.ResourceCPU:    want.cpuRequest != have.cpuRequest || want.cpuLimit != have.cpuLimit,
		corev1.ResourceMemory: want.memoryRequest != have.memoryRequest || want.memoryLimit != have.memoryLimit,
	}
	for _, pol := range spec.ResizePolicy {
		if changed[pol.ResourceName] && pol.RestartPolicy == corev1.RestartContainer {
			p.kill(a, c, KillReason{Reason: KillReasonResize, Message: fmt.Sprintf("Container %s resize requires restart", spec.Name)})
			return true
		}
	}
	a.Resize.Containers = append(a.Resize.Containers, ResizeContainer{ContainerRef: ContainerRef{ID: c.ID, Name: c.Name}, Init: init, Index: idx})
	return false
}

// resizeInPlace plans an in-place update of a running ordinary init
// container whose allocation changed, as upstream's
// computeInitContainerActions: no restart, and not part of InProgress
// (upstream's IsPodResizeInProgress counts regular containers and sidecars
// only).
func (p *planner) resizeInPlace(a *Actions, spec *corev1.Container, c *runtimestate.Container, idx int) {
	if sizeOf(spec.Resources, p.pod.Spec.Resources) == p.actuated(spec) {
		return
	}
	a.Resize.PodCgroup = true
	a.Resize.Containers = append(a.Resize.Containers, ResizeContainer{ContainerRef: ContainerRef{ID: c.ID, Name: c.Name}, Init: true, Index: idx})
}

// finishResize completes the resize part of a plan once the containers to
// start are known: a container that starts with other resources than it
// last ran with, or changed pod-level resources, need the pod cgroup set
// first.
func (p *planner) finishResize(a *Actions) {
	if p.actuatedRes == nil {
		return
	}
	if podSized(p.actuatedPod) != podSized(p.pod.Spec.Resources) {
		a.Resize.PodCgroup = true
		if len(p.rt.Containers) > 0 {
			a.Resize.InProgress = true
		}
	}
	starts := func(specs []corev1.Container, idx []int) {
		for _, i := range idx {
			if sizeOf(specs[i].Resources, p.pod.Spec.Resources) != p.actuated(&specs[i]) {
				a.Resize.PodCgroup = true
			}
		}
	}
	starts(p.pod.Spec.InitContainers, a.InitContainers)
	starts(p.pod.Spec.Containers, a.StartContainers)
}
