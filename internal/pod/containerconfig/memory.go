package containerconfig

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// ContainerMemory is what memory QoS and swap add to a container's Linux
// resources.
type ContainerMemory struct {
	// Unified are the cgroup v2 files to set; nil when there are none.
	Unified map[string]string
	// SwapLimit is the cgroup v1 memory+swap limit
	// (MemorySwapLimitInBytes); 0 sets none.
	SwapLimit int64
}

// ContainerMemoryQoS is upstream's one decision on a container's memory
// QoS and swap (generateLinuxContainerResources with
// configureContainerSwapResources); memoryLimit is the limit the
// container's resources carry. DRA memory is not counted: berth runs no
// DRA claims.
//
// Swap, when the swap controller is available: LimitedSwap (see
// SwapBehavior) gives memory.swap.max = request/memory capacity × swap
// capacity; otherwise a cgroup v2 container gets memory.swap.max 0 and a
// cgroup v1 one a memory+swap limit equal to its memory limit.
//
// Memory QoS, when enforced (QoSEnforced): memory.min (Guaranteed) or
// memory.low (Burstable) = the container's memory request with
// TieredReservation, both 0 otherwise; with a ThrottlingFactor,
// memory.high = cgroupmath.MemoryHighOf(request, limit or allocatable
// memory) when it is above the request, except for a container whose
// request equals its limit and one without a limit in a pod with a
// pod-level memory limit (the pod cgroup's memory.high throttles it). On
// cgroup v2 without
// memory QoS, memory.high is reset to "max".
func ContainerMemoryQoS(pod *corev1.Pod, c *corev1.Container, memoryLimit int64, s cgroupmath.MemorySettings) ContainerMemory {
	var out ContainerMemory
	set := func(k, v string) {
		if out.Unified == nil {
			out.Unified = map[string]string{}
		}
		out.Unified[k] = v
	}
	if s.Swap.ControllerAvailable {
		switch {
		case SwapBehavior(pod, c, s) == cgroupmath.LimitedSwap:
			if limit, ok := limitedSwap(c.Resources.Requests.Memory().Value(), s.Swap); ok {
				set(cgroupmath.SwapMax, strconv.FormatInt(limit, 10))
			} else {
				set(cgroupmath.SwapMax, "0")
			}
		case s.CgroupV2:
			set(cgroupmath.SwapMax, "0")
		default:
			out.SwapLimit = memoryLimit
		}
	}
	if !s.QoSEnforced() {
		if s.CgroupV2 {
			set(cgroupmath.MemoryHigh, "max")
		}
		return out
	}
	request := c.Resources.Requests.Memory().Value()
	limitSpec := c.Resources.Limits.Memory().Value()
	switch {
	case request != 0 && s.TieredReservation && podQOS(pod) == corev1.PodQOSGuaranteed:
		set(cgroupmath.MemoryMin, strconv.FormatInt(request, 10))
	case request != 0 && s.TieredReservation:
		set(cgroupmath.MemoryLow, strconv.FormatInt(request, 10))
	default:
		set(cgroupmath.MemoryMin, "0")
		set(cgroupmath.MemoryLow, "0")
	}
	podThrottles := limitSpec == 0 && resourcehelper.IsPodLevelResourcesSet(pod) && !pod.Spec.Resources.Limits.Memory().IsZero()
	if s.ThrottlingFactor == nil || podThrottles || (request == limitSpec && request != 0) {
		return out
	}
	var high int64
	switch {
	case limitSpec != 0:
		high = cgroupmath.MemoryHighOf(request, limitSpec, *s.ThrottlingFactor, s.EffectivePageSize())
	case s.AllocatableMemory > 0:
		high = cgroupmath.MemoryHighOf(request, s.AllocatableMemory, *s.ThrottlingFactor, s.EffectivePageSize())
	}
	if high != 0 && high > request {
		set(cgroupmath.MemoryHigh, strconv.FormatInt(high, 10))
	}
	return out
}

// SwapBehavior is upstream's GetContainerSwapBehavior: LimitedSwap only
// when configured, on cgroup v2 with the swap controller, for a
// container of a Burstable pod that is not critical and whose memory
// request is set and differs from its limit; NoSwap otherwise.
func SwapBehavior(pod *corev1.Pod, c *corev1.Container, s cgroupmath.MemorySettings) string {
	if s.Swap.Behavior != cgroupmath.LimitedSwap || !s.Swap.ControllerAvailable || !s.CgroupV2 || podutil.IsCritical(pod) {
		return cgroupmath.NoSwap
	}
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	if podQOS(pod) != corev1.PodQOSBurstable || (req.IsZero() && lim.IsZero()) || req.Cmp(*lim) == 0 {
		return cgroupmath.NoSwap
	}
	return cgroupmath.LimitedSwap
}

// limitedSwap is upstream's calcSwapForBurstablePods: the container's
// share of the node's memory, of the node's swap. It fails (no swap) on a
// node without memory or for a request above it.
func limitedSwap(request int64, s cgroupmath.SwapSettings) (int64, bool) {
	if s.MemoryCapacity <= 0 || request > s.MemoryCapacity {
		return 0, false
	}
	return int64(float64(request) / float64(s.MemoryCapacity) * float64(s.Capacity)), true
}
