package podstatus

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// reported is what berth knows a container runs with: the runtime's
// report, completed from the resources last applied to it.
type reported struct {
	cpuRequest, cpuLimit, memoryRequest, memoryLimit *resource.Quantity
}

// reportedResources is upstream toKubeContainerStatus's resources: the
// runtime's report (runtimestate.Container.Resources); when the runtime
// reports none, the container's actuated resources (allocation's record
// of what was last applied), and the actuated memory request (no runtime
// reports one) when it is not zero. nil when neither is known.
func reportedResources(c *runtimestate.Container, actuated map[string]corev1.ResourceRequirements) *reported {
	var r *reported
	if c.Resources != nil {
		r = &reported{cpuRequest: c.Resources.CPURequest, cpuLimit: c.Resources.CPULimit, memoryLimit: c.Resources.MemoryLimit}
	}
	a, ok := actuated[c.Name]
	switch {
	case !ok:
	case r == nil:
		// As upstream, a resource the record lacks reads as zero.
		r = &reported{cpuRequest: a.Requests.Cpu(), cpuLimit: a.Limits.Cpu(),
			memoryRequest: a.Requests.Memory(), memoryLimit: a.Limits.Memory()}
	default:
		if m := a.Requests[corev1.ResourceMemory]; !m.IsZero() {
			r.memoryRequest = &m
		}
	}
	return r
}

// containerResources sets the status's resources from the container's
// newest runtime instance c (upstream's part of convertToAPIContainerStatuses
// for InPlacePodVerticalScaling): allocatedResources are the spec's
// requests (the pod Generate gets is the allocated one), resources
// statusResources. old is the container's previous status, or nil.
func containerResources(in *Input, s *corev1.ContainerStatus, spec *corev1.Container, c *runtimestate.Container, old *corev1.ContainerStatus) {
	s.AllocatedResources = spec.Resources.Requests.DeepCopy()
	s.Resources = statusResources(spec, s, c, old, reportedResources(c, in.Actuated))
}

// statusResources is upstream's convertContainerStatusResources. A
// container that does not run shows its allocated resources. A running
// one starts from them and shows, for a side the spec sets (limits,
// requests), what it runs with: the CPU limit unless both it and the
// allocated one are at or under the 1 ms quota floor
// (cgroupmath.MinMilliCPULimit), the CPU request unless both are at or
// under cgroupmath.MinShares (in milli-CPU, as upstream compares it), the
// memory limit and request.
// What is not known keeps the previous status's value when that status is
// of the same container instance, running.
func statusResources(spec *corev1.Container, s *corev1.ContainerStatus, c *runtimestate.Container, old *corev1.ContainerStatus, r *reported) *corev1.ResourceRequirements {
	out := spec.Resources.DeepCopy()
	if c.State != runtimestate.ContainerRunning {
		return out
	}
	if r == nil {
		r = &reported{}
	}
	var prev corev1.ResourceRequirements
	sameInstance := old != nil && old.State.Running != nil && old.ContainerID == s.ContainerID
	if sameInstance && old.Resources != nil {
		prev = *old.Resources
	}
	set := func(list corev1.ResourceList, name corev1.ResourceName, q *resource.Quantity, apply bool, prevList corev1.ResourceList) {
		if q == nil {
			if p, ok := prevList[name]; ok {
				list[name] = p.DeepCopy()
			}
			return
		}
		if apply {
			list[name] = q.DeepCopy()
		}
	}
	if out.Limits != nil {
		cpu := r.cpuLimit != nil && (r.cpuLimit.MilliValue() > cgroupmath.MinMilliCPULimit || out.Limits.Cpu().MilliValue() > cgroupmath.MinMilliCPULimit)
		set(out.Limits, corev1.ResourceCPU, r.cpuLimit, cpu, prev.Limits)
		set(out.Limits, corev1.ResourceMemory, r.memoryLimit, true, prev.Limits)
	}
	if out.Requests != nil {
		cpu := r.cpuRequest != nil && (r.cpuRequest.MilliValue() > cgroupmath.MinShares || out.Requests.Cpu().MilliValue() > cgroupmath.MinShares)
		set(out.Requests, corev1.ResourceCPU, r.cpuRequest, cpu, prev.Requests)
		set(out.Requests, corev1.ResourceMemory, r.memoryRequest, true, prev.Requests)
	}
	return out
}

// podResources sets the pod-level status.allocatedResources and
// status.resources as upstream's convertStatusToAPIStatus does with
// InPlacePodLevelResourcesVerticalScaling (on by default in v1.37), for
// every pod: allocatedResources are the pod's requests
// (podutil.PodRequests: containers, pod-level resources, overhead);
// resources are upstream's getEffectiveAllocatedResources (the pod-level
// resources with the pod's requests and limits) for a pod that is not
// running. For a running one upstream reads the cpu and the memory limit
// back from the pod cgroup; berth takes them from what it last set there
// (in.Actuated, in.ActuatedPod: the same values, as long as nobody else
// writes the cgroup), and the memory request from the allocation, as
// upstream. So a resize that failed to reach the pod cgroup does not show
// as done.
func podResources(s *corev1.PodStatus, pod *corev1.Pod, in *Input) {
	s.AllocatedResources = podutil.PodRequests(pod).DeepCopy()
	if pod.Status.Phase != corev1.PodRunning || in.Actuated == nil {
		s.Resources = effectiveResources(pod)
		return
	}
	actuated := pod.DeepCopy()
	actuated.Spec.Resources = in.ActuatedPod.DeepCopy()
	for _, cs := range [][]corev1.Container{actuated.Spec.InitContainers, actuated.Spec.Containers} {
		for i := range cs {
			if r, ok := in.Actuated[cs[i].Name]; ok {
				cs[i].Resources = *r.DeepCopy()
			}
		}
	}
	r := effectiveResources(actuated)
	if m, ok := s.AllocatedResources[corev1.ResourceMemory]; ok {
		r.Requests[corev1.ResourceMemory] = m.DeepCopy()
	} else {
		delete(r.Requests, corev1.ResourceMemory)
	}
	s.Resources = r
}

// effectiveResources is upstream's getEffectiveAllocatedResources: the
// pod-level resources with the pod's requests and limits.
func effectiveResources(pod *corev1.Pod) *corev1.ResourceRequirements {
	r := pod.Spec.Resources.DeepCopy()
	if r == nil {
		r = &corev1.ResourceRequirements{}
	}
	r.Requests = podutil.PodRequests(pod).DeepCopy()
	r.Limits = resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}).DeepCopy()
	return r
}
