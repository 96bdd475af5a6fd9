package cm

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/berthk8s/berth/internal/podkit/cgroupmath"
	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// maxCPUWeight is cgroup v2's largest cpu.weight.
const maxCPUWeight = 10000

// pidResource is upstream's internal "pid" resource of node capacity
// (pkg/kubelet/stats/pidlimit.PIDs): the node's process IDs, reserved with
// systemReserved/kubeReserved "pid" and enforced as pids.max.
const pidResource corev1.ResourceName = "pid"

// Resources is what berth sets on one cgroup; nil fields are left alone.
// CPUShares is in cgroup v1 units; the edge converts it to cpu.weight on
// cgroup v2 (CPUWeight).
type Resources struct {
	CPUShares *uint64
	CPUQuota  *int64
	CPUPeriod *uint64
	Memory    *int64
	PidsLimit *int64
	// Unified are cgroup v2 files (memory QoS); a cgroup v1 host leaves
	// them alone, as upstream's cgroup manager does.
	Unified map[string]string
}

// shares is cgroupmath.MilliCPUToShares (upstream's MilliCPUToShares,
// shared with containers) as the cgroup's unsigned value.
func shares(milliCPU int64) uint64 {
	return uint64(cgroupmath.MilliCPUToShares(milliCPU))
}

// CPUWeight converts cgroup v1 cpu shares to a cgroup v2 cpu.weight, as
// upstream's getCPUWeight: 1 + ((shares-2)*9999)/262142, 10000 from
// MaxShares up (shares below MinShares count as MinShares).
func CPUWeight(cpuShares uint64) uint64 {
	const lo, hi = cgroupmath.MinShares, cgroupmath.MaxShares
	if cpuShares >= hi {
		return maxCPUWeight
	}
	cpuShares = max(cpuShares, lo)
	return 1 + ((cpuShares-lo)*(maxCPUWeight-1))/(hi-lo)
}

// PodOptions are the node settings a pod cgroup's resources depend on.
type PodOptions struct {
	// CFS is cpuCFSQuota and cpuCFSQuotaPeriod, as containers have them;
	// unenforced quotas leave the pod's quota unlimited (-1).
	CFS cgroupmath.CFS
	// PidsLimit is podPidsLimit; 0 or less sets none.
	PidsLimit int64
	// Memory is the memory QoS of containers, which pod cgroups share
	// (podMemoryQoS).
	Memory cgroupmath.MemorySettings
}

// ForPod returns what a pod's cgroup is set to, as upstream's
// ResourceConfigForPod (pod-level resources, on by default in v1.37,
// included):
//
//   - Guaranteed: cpu shares from the requests, cpu quota and period from
//     the limits, memory limit = the summed memory limits;
//   - Burstable: cpu shares from the requests; the quota only when every
//     container (or the pod) has a cpu limit, the memory limit only when
//     every container (or the pod) has a memory limit;
//   - BestEffort: MinShares and nothing else;
//
// the pids limit (podPidsLimit) when it is positive, whatever the class,
// and the memory QoS files of podMemoryQoS.
func ForPod(pod *corev1.Pod, opts PodOptions) Resources {
	reqs := podutil.PodRequests(pod)
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	cpuDeclared, memDeclared := limitsDeclared(pod)
	var cpuRequest, cpuLimit, memRequest, memLimit int64
	if q, ok := reqs[corev1.ResourceCPU]; ok {
		cpuRequest = q.MilliValue()
	}
	if q, ok := reqs[corev1.ResourceMemory]; ok {
		memRequest = q.Value()
	}
	if q, ok := limits[corev1.ResourceCPU]; ok {
		cpuLimit = q.MilliValue()
	}
	if q, ok := limits[corev1.ResourceMemory]; ok {
		memLimit = q.Value()
	}
	cpuShares := shares(cpuRequest)
	quota, cfsPeriod, enforced := opts.CFS.Quota(cpuLimit)
	if !enforced {
		quota = -1
	}
	period := uint64(cfsPeriod)
	var r Resources
	switch podutil.QOSClass(pod) {
	case corev1.PodQOSGuaranteed:
		r = Resources{CPUShares: &cpuShares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memLimit}
	case corev1.PodQOSBurstable:
		r.CPUShares = &cpuShares
		if cpuDeclared {
			r.CPUQuota, r.CPUPeriod = &quota, &period
		}
		if memDeclared {
			r.Memory = &memLimit
		}
	default:
		minShares := uint64(cgroupmath.MinShares)
		r.CPUShares = &minShares
	}
	if opts.PidsLimit > 0 {
		pids := opts.PidsLimit
		r.PidsLimit = &pids
	}
	r.Unified = podMemoryQoS(pod, memRequest, memLimit, memDeclared, opts.Memory)
	return r
}

// Widen returns the larger of a and b for each cpu and memory value (an
// unlimited quota or memory limit is the largest), leaving the rest as b
// has them except the memory QoS files, which a widening leaves alone. A
// value one side does not set is left alone.
func Widen(a, b Resources) Resources {
	out := b
	out.Unified = nil
	if a.CPUShares != nil && b.CPUShares != nil {
		v := max(*a.CPUShares, *b.CPUShares)
		out.CPUShares = &v
	}
	if a.CPUQuota != nil && b.CPUQuota != nil {
		v := max(*a.CPUQuota, *b.CPUQuota)
		if *a.CPUQuota < 0 || *b.CPUQuota < 0 {
			v = -1
		}
		out.CPUQuota = &v
	} else {
		out.CPUQuota, out.CPUPeriod = nil, nil
	}
	if a.Memory != nil && b.Memory != nil {
		v := max(*a.Memory, *b.Memory)
		if *a.Memory <= 0 || *b.Memory <= 0 {
			v = -1
		}
		out.Memory = &v
	} else {
		out.Memory = nil
	}
	return out
}

// limitsDeclared reports whether every init and regular container declares
// a cpu limit and a memory limit; a pod-level limit declares it for all.
func limitsDeclared(pod *corev1.Pod) (cpu, memory bool) {
	cpu, memory = true, true
	check := func(cs []corev1.Container) {
		for i := range cs {
			if cs[i].Resources.Limits.Cpu().IsZero() {
				cpu = false
			}
			if cs[i].Resources.Limits.Memory().IsZero() {
				memory = false
			}
		}
	}
	check(pod.Spec.InitContainers)
	check(pod.Spec.Containers)
	if pr := pod.Spec.Resources; pr != nil && resourcehelper.IsPodLevelResourcesSet(pod) {
		if !pr.Limits.Cpu().IsZero() {
			cpu = true
		}
		if !pr.Limits.Memory().IsZero() {
			memory = true
		}
	}
	return cpu, memory
}

// ForReserved returns the resources of a node-level cgroup (kubepods, or a
// reserved cgroup) limited to rl, as upstream's getCgroupConfigInternal:
// cpu shares from cpu, and unless compressibleOnly also the memory limit
// from memory and the pids limit from "pid". A nil rl sets nothing.
func ForReserved(rl corev1.ResourceList, compressibleOnly bool) Resources {
	var r Resources
	if rl == nil {
		return r
	}
	if q, ok := rl[corev1.ResourceCPU]; ok {
		v := shares(q.MilliValue())
		r.CPUShares = &v
	}
	if compressibleOnly {
		return r
	}
	if q, ok := rl[corev1.ResourceMemory]; ok {
		v := q.Value()
		r.Memory = &v
	}
	if q, ok := rl[pidResource]; ok {
		v := q.Value()
		r.PidsLimit = &v
	}
	return r
}

// EnforcedAllocatable returns what the kubepods cgroup is limited to when
// "pods" is enforced, as upstream's getNodeAllocatableAbsoluteImpl: each
// resource of capacity less systemReserved and kubeReserved, floored at 0.
// Unlike the allocatable the Node reports, the hard eviction threshold is
// not subtracted: the eviction manager guards it, not the cgroup.
func EnforcedAllocatable(capacity, systemReserved, kubeReserved corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, c := range capacity {
		v := c.DeepCopy()
		if q, ok := systemReserved[name]; ok {
			v.Sub(q)
		}
		if q, ok := kubeReserved[name]; ok {
			v.Sub(q)
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		out[name] = v
	}
	return out
}
