package cgroupmath

import "math"

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
// memory QoS and swap (internal/pod/containerconfig) and the memory QoS of
// pod and QoS cgroups (internal/node/cm) depend on, resolved once at start
// (agent). The zero value is a cgroup v1 node without a swap controller:
// nothing is set.
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

// EffectivePageSize is the page size memory.high is rounded down to:
// PageSize, or 4096 when it is 0. Containers and pod cgroups round alike.
func (s MemorySettings) EffectivePageSize() int64 {
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
