package cm

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// podMemoryQoS returns the cgroup v2 memory files of a pod's cgroup when
// memory QoS is enforced (s.QoSEnforced), as upstream's
// ResourceConfigForPod and ApplyPodLevelMemoryHigh:
//
//   - with TieredReservation, memory.min (Guaranteed) or memory.low
//     (Burstable) = the pod's memory request, when it has one;
//   - with a throttling factor, for a pod with pod-level resources whose
//     memory limits are declared (memDeclared), memory.high =
//     cgroupmath.MemoryHighOf(request, limit) when the limit is set,
//     differs from the request and the result is above the request.
//
// nil when there is nothing to set.
func podMemoryQoS(pod *corev1.Pod, request, limit int64, memDeclared bool, s cgroupmath.MemorySettings) map[string]string {
	if !s.QoSEnforced() {
		return nil
	}
	out := map[string]string{}
	if s.TieredReservation && request > 0 {
		key := cgroupmath.MemoryLow
		if podutil.QOSClass(pod) == corev1.PodQOSGuaranteed {
			key = cgroupmath.MemoryMin
		}
		out[key] = strconv.FormatInt(request, 10)
	}
	if s.ThrottlingFactor != nil && resourcehelper.IsPodLevelResourcesSet(pod) && memDeclared &&
		limit != 0 && !(request == limit && request != 0) {
		if high := cgroupmath.MemoryHighOf(request, limit, *s.ThrottlingFactor, s.EffectivePageSize()); high > 0 && high > request {
			out[cgroupmath.MemoryHigh] = strconv.FormatInt(high, 10)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// QOSOptions are the node settings the QoS class cgroups depend on.
type QOSOptions struct {
	// Memory is the memory QoS of containers and pods; with
	// TieredReservation it protects the QoS class cgroups too.
	Memory cgroupmath.MemorySettings
	// ReservedMemoryPercent is qosReserved's memory percentage when the
	// QOSReserved gate is on; nil otherwise.
	ReservedMemoryPercent *int64
}

// QOSResources is what the QoS level cgroups are set to: kubepods (the
// Guaranteed class's), burstable and besteffort. A plain value.
type QOSResources struct {
	Kubepods, Burstable, BestEffort Resources
}

// ForQOS returns what the QoS level cgroups are set to for the active
// pods, as upstream's qosContainerManager UpdateCgroups:
//
//   - cpu shares: burstable the shares of its pods' summed cpu requests,
//     besteffort MinShares;
//   - with memory QoS enforced and TieredReservation: kubepods memory.min
//     = the Guaranteed and Burstable pods' summed memory requests and
//     memory.low = the Burstable ones', burstable memory.low = the same;
//   - with qosReserved memory (QOSReserved gate) and a known allocatable
//     memory: burstable's memory limit = allocatable less percent of the
//     Guaranteed requests, besteffort's = that less percent of the
//     Burstable requests.
func ForQOS(active []*corev1.Pod, opts QOSOptions) QOSResources {
	var cpuMilli int64
	memory := map[corev1.PodQOSClass]int64{}
	for _, pod := range active {
		class := podutil.QOSClass(pod)
		if class == corev1.PodQOSBestEffort {
			continue
		}
		reqs := podutil.PodRequests(pod)
		if q, ok := reqs[corev1.ResourceMemory]; ok {
			memory[class] += q.Value()
		}
		if q, ok := reqs[corev1.ResourceCPU]; ok && class == corev1.PodQOSBurstable {
			cpuMilli += q.MilliValue()
		}
	}
	burstableShares, besteffortShares := shares(cpuMilli), uint64(cgroupmath.MinShares)
	out := QOSResources{Burstable: Resources{CPUShares: &burstableShares}, BestEffort: Resources{CPUShares: &besteffortShares}}
	g, b := memory[corev1.PodQOSGuaranteed], memory[corev1.PodQOSBurstable]
	if opts.Memory.QoSEnforced() && opts.Memory.TieredReservation {
		out.Kubepods.Unified = map[string]string{
			cgroupmath.MemoryMin: strconv.FormatInt(g+b, 10),
			cgroupmath.MemoryLow: strconv.FormatInt(b, 10),
		}
		out.Burstable.Unified = map[string]string{cgroupmath.MemoryLow: strconv.FormatInt(b, 10)}
	}
	if pct, alloc := opts.ReservedMemoryPercent, opts.Memory.AllocatableMemory; pct != nil && alloc > 0 {
		burstableLimit := alloc - g*(*pct)/100
		besteffortLimit := burstableLimit - b*(*pct)/100
		out.Burstable.Memory, out.BestEffort.Memory = &burstableLimit, &besteffortLimit
	}
	return out
}

// staleProtection is what upstream resets at start on cgroup v2 when
// memory QoS is off or its policy is None, so protection left by an
// earlier configuration goes: kubepods memory.min and memory.low, and
// burstable memory.low, to 0. Both nil when there is nothing to reset.
func staleProtection(s cgroupmath.MemorySettings) (kubepods, burstable map[string]string) {
	if !s.CgroupV2 || (s.QoS && s.TieredReservation) {
		return nil, nil
	}
	return map[string]string{cgroupmath.MemoryMin: "0", cgroupmath.MemoryLow: "0"},
		map[string]string{cgroupmath.MemoryLow: "0"}
}

// reservedMemoryMin is upstream's memory QoS on a reserved cgroup
// (enforceExistingCgroup): with the MemoryQoS gate, memory.min = the
// reserved memory it is limited to. (Only a cgroup v2 host writes it.)
func reservedMemoryMin(r Resources, s cgroupmath.MemorySettings) Resources {
	if s.QoS && r.Memory != nil {
		r.Unified = map[string]string{cgroupmath.MemoryMin: strconv.FormatInt(*r.Memory, 10)}
	}
	return r
}

// capToUsage is upstream's retrySetMemoryReserve for one QoS class: when
// its qosReserved memory limit could not be set because the class already
// uses more (the kernel refuses a limit below usage), the limit becomes
// the usage, so the class cannot grow further.
func capToUsage(r Resources, usage int64) Resources {
	if r.Memory != nil && usage > *r.Memory {
		r.Memory = &usage
	}
	return r
}
