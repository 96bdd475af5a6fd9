package cgroupmath

import "math"

// CPU constants, as the kernel's CFS and upstream's cm package define them.
const (
	MinShares     = 2
	MaxShares     = 262144
	sharesPerCPU  = 1024
	milliCPUToCPU = 1000
	// QuotaPeriod is the CFS period in microseconds: cpuCFSQuotaPeriod's
	// default (100ms).
	QuotaPeriod = 100000
	// minQuota is the smallest CFS quota the kernel accepts (1 ms).
	minQuota = 1000
	// MinMilliCPULimit is the CPU limit the smallest quota stands for over
	// QuotaPeriod (minQuota × 1000 / QuotaPeriod, upstream's
	// cm.MinMilliCPULimit): limits at or under it cannot be told apart.
	MinMilliCPULimit = 10
)

// MilliCPUToShares converts a CPU request to cgroup cpu.shares: 1024 per
// CPU, at least 2 (also for no request), at most 262144. Containers and
// pod and QoS cgroups (internal/node/cm) use it alike.
func MilliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return MinShares
	}
	shares := milliCPU * sharesPerCPU / milliCPUToCPU
	return min(max(shares, MinShares), MaxShares)
}

// MilliCPUToQuota converts a CPU limit to a CFS quota for the given period;
// 0 (no limit) means unlimited. Containers and pod cgroups use it alike.
func MilliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/milliCPUToCPU, minQuota)
}

// SharesToMilliCPU is the inverse of MilliCPUToShares (upstream
// cm.SharesToMilliCPU): the CPU request cgroup cpu.shares stand for,
// rounded up, so a request survives the round trip from 2m up; shares
// below MinShares stand for none (0).
func SharesToMilliCPU(shares int64) int64 {
	if shares < MinShares {
		return 0
	}
	return int64(math.Ceil(float64(shares*milliCPUToCPU) / float64(sharesPerCPU)))
}

// QuotaToMilliCPU is the inverse of MilliCPUToQuota (upstream
// cm.QuotaToMilliCPU): the CPU limit a CFS quota over period stands for;
// -1 (unlimited) is 0. period must be positive.
func QuotaToMilliCPU(quota, period int64) int64 {
	if quota == -1 {
		return 0
	}
	return quota * milliCPUToCPU / period
}

// CFS is how CPU limits become CFS quotas: kubelet cpuCFSQuota and
// cpuCFSQuotaPeriod. The CustomCPUCFSQuotaPeriod gate, GA and on in
// v1.37, is always on in berth (config refuses it off), so the period is
// always the configured one. The zero value enforces quotas over
// QuotaPeriod. Containers, sandboxes and pod cgroups (internal/node/cm) use it
// alike.
type CFS struct {
	// Unenforced is cpuCFSQuota: false: CPU limits set no quota.
	Unenforced bool
	// Period is the CFS period in microseconds; 0 means QuotaPeriod.
	Period int64
}

// Quota returns the CFS quota (0 for no limit: unlimited) and period of a
// CPU limit, and whether quotas are enforced at all; when they are not,
// quota is 0 and period the configured one.
func (c CFS) Quota(milliCPU int64) (quota, period int64, enforced bool) {
	period = c.Period
	if period == 0 {
		period = QuotaPeriod
	}
	if c.Unenforced {
		return 0, period, false
	}
	return MilliCPUToQuota(milliCPU, period), period, true
}
