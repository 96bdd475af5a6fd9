package containerconfig

import (
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// The cgroup v2 memory files memory QoS and swap set (upstream's
// cm.Cgroup2MemoryMin, Cgroup2MemoryLow, Cgroup2MemoryHigh and
// Cgroup2MaxSwapFilename). Containers and pod and QoS cgroups
// (internal/node/cm) use them alike.
const (
	MemoryMin  = "memory.min"
	MemoryLow  = "memory.low"
	MemoryHigh = "memory.high"
	SwapMax    = "memory.swap.max"
)

// The memorySwap.swapBehavior values (upstream pkg/kubelet/types); ""
// means NoSwap.
const (
	NoSwap      = "NoSwap"
	LimitedSwap = "LimitedSwap"
)

// defaultPageSize is the page size MemorySettings.PageSize 0 stands for.
const defaultPageSize = 4096

// MemorySettings are the node facts and kubelet settings a container's
// memory QoS and swap depend on, resolved once at start (agent). The zero
// value is a cgroup v1 node without a swap controller: nothing is set.
type MemorySettings struct {
	// CgroupV2: the host runs the unified cgroup v2 hierarchy only.
	CgroupV2 bool
	// QoS is the MemoryQoS feature gate (Beta, on in v1.37); memory QoS
	// applies only together with CgroupV2.
	QoS bool
	// ThrottlingFactor is memoryThrottlingFactor; nil sets no memory.high
	// (upstream's default since v1.37).
	ThrottlingFactor *float64
	// TieredReservation is memoryReservationPolicy TieredReservation:
	// memory.min for Guaranteed pods and memory.low for Burstable ones,
	// from the memory requests. Otherwise (None) both are 0.
	TieredReservation bool
	// AllocatableMemory is the node's memory less systemReserved and
	// kubeReserved (upstream's GetNodeAllocatableAbsolute): what
	// memory.high is computed from for a container without a memory
	// limit.
	AllocatableMemory int64
	// PageSize is the host's page size in bytes; memory.high is rounded
	// down to it. 0 means 4096.
	PageSize int64
	// Swap is what decides a container's swap.
	Swap SwapSettings
}

// SwapSettings are the node facts and the setting a container's swap
// depends on. NodeSwap is GA and locked on in v1.37, so it is no field.
type SwapSettings struct {
	// ControllerAvailable: the kernel accounts swap per cgroup
	// (memory.memsw.limit_in_bytes on cgroup v1, memory.swap.max in
	// berth's own cgroup on v2), upstream's swap controller check.
	// Without it berth sets no swap limit at all.
	ControllerAvailable bool
	// Behavior is memorySwap.swapBehavior: "", NoSwap or LimitedSwap.
	Behavior string
	// Capacity is the node's swap in bytes (SwapTotal); MemoryCapacity
	// its memory (MemTotal). LimitedSwap shares Capacity among Burstable
	// containers by their share of MemoryCapacity.
	Capacity, MemoryCapacity int64
}

// QoSEnforced reports whether memory QoS applies: the MemoryQoS gate on a
// cgroup v2 host (upstream's isMemoryQoSEnforced). Containers and pod
// cgroups ask it alike.
func (s MemorySettings) QoSEnforced() bool { return s.QoS && s.CgroupV2 }

func (s MemorySettings) pageSize() int64 {
	if s.PageSize <= 0 {
		return defaultPageSize
	}
	return s.PageSize
}

// MemoryHighOf is KEP-2570's memory.high: floor((request + factor ×
// (limit - request)) / pageSize) × pageSize, as upstream computes it for
// containers (limit: the memory limit, or the node's allocatable memory)
// and for pod cgroups.
func MemoryHighOf(request, limit int64, factor float64, pageSize int64) int64 {
	return int64(math.Floor((float64(request)+(float64(limit)-float64(request))*factor)/float64(pageSize))) * pageSize
}

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
// memory.high = MemoryHighOf(request, limit or allocatable memory) when it
// is above the request, except for a container whose request equals its
// limit and one without a limit in a pod with a pod-level memory limit
// (the pod cgroup's memory.high throttles it). On cgroup v2 without
// memory QoS, memory.high is reset to "max".
func ContainerMemoryQoS(pod *corev1.Pod, c *corev1.Container, memoryLimit int64, s MemorySettings) ContainerMemory {
	var out ContainerMemory
	set := func(k, v string) {
		if out.Unified == nil {
			out.Unified = map[string]string{}
		}
		out.Unified[k] = v
	}
	if s.Swap.ControllerAvailable {
		switch {
		case SwapBehavior(pod, c, s) == LimitedSwap:
			if limit, ok := limitedSwap(c.Resources.Requests.Memory().Value(), s.Swap); ok {
				set(SwapMax, strconv.FormatInt(limit, 10))
			} else {
				set(SwapMax, "0")
			}
		case s.CgroupV2:
			set(SwapMax, "0")
		default:
			out.SwapLimit = memoryLimit
		}
	}
	if !s.QoSEnforced() {
		if s.CgroupV2 {
			set(MemoryHigh, "max")
		}
		return out
	}
	request := c.Resources.Requests.Memory().Value()
	limitSpec := c.Resources.Limits.Memory().Value()
	switch {
	case request != 0 && s.TieredReservation && podQOS(pod) == corev1.PodQOSGuaranteed:
		set(MemoryMin, strconv.FormatInt(request, 10))
	case request != 0 && s.TieredReservation:
		set(MemoryLow, strconv.FormatInt(request, 10))
	default:
		set(MemoryMin, "0")
		set(MemoryLow, "0")
	}
	podThrottles := limitSpec == 0 && resourcehelper.IsPodLevelResourcesSet(pod) && !pod.Spec.Resources.Limits.Memory().IsZero()
	if s.ThrottlingFactor == nil || podThrottles || (request == limitSpec && request != 0) {
		return out
	}
	var high int64
	switch {
	case limitSpec != 0:
		high = MemoryHighOf(request, limitSpec, *s.ThrottlingFactor, s.pageSize())
	case s.AllocatableMemory > 0:
		high = MemoryHighOf(request, s.AllocatableMemory, *s.ThrottlingFactor, s.pageSize())
	}
	if high != 0 && high > request {
		set(MemoryHigh, strconv.FormatInt(high, 10))
	}
	return out
}

// SwapBehavior is upstream's GetContainerSwapBehavior: LimitedSwap only
// when configured, on cgroup v2 with the swap controller, for a
// container of a Burstable pod that is not critical and whose memory
// request is set and differs from its limit; NoSwap otherwise.
func SwapBehavior(pod *corev1.Pod, c *corev1.Container, s MemorySettings) string {
	if s.Swap.Behavior != LimitedSwap || !s.Swap.ControllerAvailable || !s.CgroupV2 || podutil.IsCritical(pod) {
		return NoSwap
	}
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	if podQOS(pod) != corev1.PodQOSBurstable || (req.IsZero() && lim.IsZero()) || req.Cmp(*lim) == 0 {
		return NoSwap
	}
	return LimitedSwap
}

// limitedSwap is upstream's calcSwapForBurstablePods: the container's
// share of the node's memory, of the node's swap. It fails (no swap) on a
// node without memory or for a request above it.
func limitedSwap(request int64, s SwapSettings) (int64, bool) {
	if s.MemoryCapacity <= 0 || request > s.MemoryCapacity {
		return 0, false
	}
	return int64(float64(request) / float64(s.MemoryCapacity) * float64(s.Capacity)), true
}
