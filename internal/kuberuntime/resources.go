package kuberuntime

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CPU constants, as the kernel's CFS and upstream's cm package define them.
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	milliCPUToCPU = 1000
	// quotaPeriod is the CFS period in microseconds (100 ms).
	quotaPeriod = 100000
	// minQuota is the smallest CFS quota the kernel accepts (1 ms).
	minQuota = 1000
)

// milliCPUToShares converts a CPU request to cgroup cpu.shares: 1024 per
// CPU, at least 2 (also for no request), at most 262144.
func milliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return minShares
	}
	shares := milliCPU * sharesPerCPU / milliCPUToCPU
	return min(max(shares, minShares), maxShares)
}

// milliCPUToQuota converts a CPU limit to a CFS quota for the given period;
// 0 (no limit) means unlimited.
func milliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/milliCPUToCPU, minQuota)
}

// containerResources builds the Linux resources of a container: cpu shares
// from the request (the limit when only a limit is set), CFS quota from the
// limit over a 100 ms period, and the memory limit. The OOM score is left
// to the runtime.
func containerResources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
	cpuRequest := c.Resources.Requests.Cpu().MilliValue()
	cpuLimit := c.Resources.Limits.Cpu().MilliValue()
	if cpuRequest == 0 && cpuLimit != 0 {
		cpuRequest = cpuLimit
	}
	return &runtimeapi.LinuxContainerResources{
		CpuShares:          milliCPUToShares(cpuRequest),
		CpuPeriod:          quotaPeriod,
		CpuQuota:           milliCPUToQuota(cpuLimit, quotaPeriod),
		MemoryLimitInBytes: c.Resources.Limits.Memory().Value(),
	}
}
